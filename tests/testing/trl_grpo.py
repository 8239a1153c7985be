"""A real TRL GRPO run on CPU, as a script: a tiny random Llama and a character tokenizer built here (no hub
download, no network), prompts from an in-memory list, the bundle's RlobsCallback added as its README says.

    python trl_grpo.py OUT.json [--steps N] [--logging-steps N] [--nan-at STEP] [--no-adapter]
        [--reward-seconds SECONDS] [--linger SECONDS] [--steps-per-generation N] [--step-seconds SECONDS]

app/ (rlobs_telemetry.py, rlobs_adapter.py) must be on the PYTHONPATH. --nan-at makes the loss of that optimizer
step (1-based) NaN, as a diverging run's would be; transformers' default logging_nan_inf_filter keeps it out of the
logs. The NaN poisons the weights, so a run that goes on after it must have generated its completions before it
(--steps-per-generation: one generation feeds N optimizer steps), or sampling fails on NaN probabilities. OUT.json
gets the per-step losses, the CPU time of train() and of the callback's hooks (thread CPU time inside each on_*
method of RlobsCallback), and the number of optimizer steps. tests/test_trl_run.py and tools/bench_trl.py run it."""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch
from datasets import Dataset
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>")


def tokenizer() -> Any:
    vocab = {token: i for i, token in enumerate(SPECIALS)}
    for char in "abcdefghijklmnopqrstuvwxyz0123456789 +=?":
        vocab.setdefault(char, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>"
    )


def model(vocab_size: int) -> Any:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )
    return LlamaForCausalLM(config)


REWARD_SECONDS = [0.0]  # a slow verifier: healthy steps that take longer than the export interval


def reward(completions: list[str], **_: Any) -> list[float]:
    time.sleep(REWARD_SECONDS[0])
    return [len(c) / 10 for c in completions]


def timed(callback: TrainerCallback, spent: list[float]) -> TrainerCallback:
    """The callback with the thread CPU time of each of its on_* hooks added to spent[0]: every hook called during
    training (set-up at train begin and the flush at train end are once per run, not per step)."""
    for name in dir(TrainerCallback):
        if name.startswith("on_") and name not in ("on_train_begin", "on_train_end"):
            hook = getattr(callback, name)

            def wrapper(*args: Any, _hook: Any = hook, **kwargs: Any) -> Any:
                start = time.thread_time()
                try:
                    return _hook(*args, **kwargs)
                finally:
                    spent[0] += time.thread_time() - start

            setattr(callback, name, wrapper)
    return callback


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--logging-steps", type=int, default=10)
    parser.add_argument("--nan-at", type=int, default=0)
    parser.add_argument("--no-adapter", action="store_true")
    parser.add_argument("--reward-seconds", type=float, default=0.0, help="time the reward function takes")
    parser.add_argument("--linger", type=float, default=0.0, help="seconds to wait after train() returns")
    parser.add_argument("--steps-per-generation", type=int, default=None)
    parser.add_argument("--step-seconds", type=float, default=0.0, help="time each loss computation takes")
    options = parser.parse_args()
    nan_at = options.nan_at
    REWARD_SECONDS[0] = options.reward_seconds

    class Trainer(GRPOTrainer):  # type: ignore[misc]
        def compute_loss(self, *args: Any, **kwargs: Any) -> Any:
            loss = super().compute_loss(*args, **kwargs)
            time.sleep(options.step_seconds)
            return loss * math.nan if self.state.global_step + 1 == nan_at else loss

    tok = tokenizer()
    args = GRPOConfig(
        output_dir=os.path.join(os.path.dirname(os.path.abspath(options.out)), "grpo-out"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=8,
        steps_per_generation=options.steps_per_generation,
        max_steps=options.steps,
        logging_steps=options.logging_steps,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    data = Dataset.from_list([{"prompt": f"{i}+{i}="} for i in range(64)])
    trainer = Trainer(model=model(len(tok)), reward_funcs=reward, args=args, train_dataset=data, processing_class=tok)
    spent = [0.0]
    if not options.no_adapter:
        import rlobs_adapter

        trainer.add_callback(timed(rlobs_adapter.RlobsCallback(), spent))
    cpu = time.process_time()
    trainer.train()
    cpu = time.process_time() - cpu
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    result = {"steps": trainer.state.global_step, "cpu": cpu, "hooks_cpu": spent[0], "losses": losses}
    if trainer.is_world_process_zero():  # under torchrun, rank 0 writes the result
        with open(options.out, "w", encoding="utf-8") as f:
            json.dump(result, f)
    time.sleep(options.linger)  # saving, pushing: the run is finishing


if __name__ == "__main__":
    main()
