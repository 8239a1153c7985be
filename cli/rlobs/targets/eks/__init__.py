"""The eks target: EKS with the AI on EKS (JARK) stack, its bundle delivered by Argo CD (its Target: target.py)."""
