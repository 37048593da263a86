"""The model and the data: a small MLP learning a fixed random "teacher" function.

Everything random is drawn from a private :class:`torch.Generator` whose seed is
derived from names (:func:`derive_seed`), never from the global RNG:

* the teacher network from ``(seed, "teacher")`` and the student's initial
  weights from ``(seed, "model")``;
* the batch of step ``s`` on rank ``r`` from ``(seed, "batch", s, r)`` -- a pure
  function of (seed, step, rank), so a job resumed at step ``s`` sees exactly the
  batches an uninterrupted job would have seen. No data loader, no RNG state to
  checkpoint.

:func:`parameter_digest` is the SHA-256 of all parameter bytes in
``state_dict`` order, the fingerprint two runs are compared by.
"""

from __future__ import annotations

import hashlib

import torch
from torch import nn

__all__ = ["MLP", "batch", "derive_seed", "parameter_digest", "teacher"]


def derive_seed(seed: int, *names: object) -> int:
    """A 63-bit seed from ``seed`` and ``names`` (SHA-256 of their ``/``-joined text)."""
    text = "/".join(str(part) for part in (seed, *names))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _generator(seed: int, *names: object) -> torch.Generator:
    return torch.Generator().manual_seed(derive_seed(seed, *names))


class MLP(nn.Sequential):
    """``features -> hidden -> hidden -> 1`` with tanh, initialised from ``(seed, "model")``."""

    def __init__(self, features: int, hidden: int, seed: int) -> None:
        super().__init__(
            nn.Linear(features, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )
        gen = _generator(seed, "model")
        with torch.no_grad():
            for module in self:
                if isinstance(module, nn.Linear):
                    bound = module.in_features**-0.5  # nn.Linear's default U(-1/sqrt(in), ..)
                    module.weight.uniform_(-bound, bound, generator=gen)
                    module.bias.uniform_(-bound, bound, generator=gen)


def teacher(features: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The target function's weights ``(w1, w2)``: ``y = sin(x @ w1) @ w2``."""
    gen = _generator(seed, "teacher")
    w1 = torch.randn(features, 8, generator=gen) / features**0.5
    w2 = torch.randn(8, 1, generator=gen) / 8**0.5
    return w1, w2


def batch(
    seed: int, step: int, rank: int, size: int, weights: tuple[torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of step ``step`` on rank ``rank`` (noise included)."""
    gen = _generator(seed, "batch", step, rank)
    w1, w2 = weights
    x = torch.randn(size, w1.shape[0], generator=gen)
    y = torch.sin(x @ w1) @ w2 + 0.01 * torch.randn(size, 1, generator=gen)
    return x, y


def parameter_digest(model: nn.Module) -> str:
    """SHA-256 (hex) of every parameter's raw bytes, in ``state_dict`` order."""
    digest = hashlib.sha256()
    for tensor in model.state_dict().values():
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()
