"""A toy target, for tests only: the smallest package with the Target shape (its Target is target.py). A test adds
it to the registry in one line, `monkeypatch.setitem(rlobs.targets.PACKAGES, "toy", "testing.toytarget")`."""
