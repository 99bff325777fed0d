"""The ``device`` config value (``auto``, ``cpu``, ``cuda``, ``cuda:<index>``) as a torch device."""

import torch

from lipnorm_exp.util.errors import ConfigError

__all__ = ["cuda_index", "parse_device", "pick_device"]


def parse_device(name: str) -> torch.device:
    """``auto`` is CUDA when available, else CPU; ``cpu``, ``cuda`` and ``cuda:<index>`` as said."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def cuda_index(device: torch.device) -> int:
    """The index of the GPU a CUDA ``device`` names (the current one where it names none)."""
    return torch.cuda.current_device() if device.index is None else device.index


def pick_device(name: str, key: str = "device") -> torch.device:
    """`parse_device`, refusing a CUDA device this machine does not have.

    ``key`` is how the refusal names where ``name`` was given (``--device`` for a command's
    option).

    Raises:
        ConfigError: a CUDA device this machine does not have.
    """
    device = parse_device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            have = f"cuda:0 to cuda:{count - 1}" if count else "no CUDA device"
            raise ConfigError(f"{key}={name} is not on this machine ({have}); allowed: auto, cpu")
    return device
