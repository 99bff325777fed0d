"""Cost of LipschitzNorm in Hugging Face models: time and memory of one training step, CPU.

A tiny and a base-size BERT encoder and a small Gemma-2 decoder (causal, its scores
soft-capped, sliding-window layers; random weights, nothing downloaded) with the model's own
attention (SDPA and eager) and with ``lipschitz_normalize`` (the ``lipschitz_norm`` attention
function, paper Eq. 19, the soft-cap applied to the normalised scores), timed in turn in one
process. Writes <out>/huggingface.csv and <out>/huggingface.md.

    python scripts/bench_huggingface.py --threads 1        # a few minutes on one core
    python scripts/bench_huggingface.py --smoke --out /tmp/bench   # seconds: does it still run?
"""

import argparse
import statistics
import time
from pathlib import Path

import bench_environment
import pandas as pd
import torch
import transformers

from lipnorm_exp.nn import lipschitz_normalize

#: name -> (model class, its config's arguments, batch, sequence length)
SIZES = {
    "tiny": ("BertModel", {"hidden_size": 32, "num_hidden_layers": 2,
                           "num_attention_heads": 4, "intermediate_size": 64}, 8, 128),
    "base": ("BertModel", {"hidden_size": 768, "num_hidden_layers": 12,
                           "num_attention_heads": 12, "intermediate_size": 3072}, 8, 128),
    "gemma2": ("Gemma2Model", {"vocab_size": 1024, "hidden_size": 256, "num_hidden_layers": 4,
                               "num_attention_heads": 4, "num_key_value_heads": 2,
                               "head_dim": 64, "intermediate_size": 1024,
                               "sliding_window": 64, "attn_logit_softcapping": 50.0}, 8, 128),
}  # fmt: skip
ATTENTIONS = ("sdpa", "eager", "lipschitz_norm")
NOTE = (
    "One training step = forward + backward of the sum of the last hidden state (no optimiser), "
    "median over the timed steps after one warm-up, the attentions of one size timed in turn, "
    "step by step. `saved_mb`: MB of the distinct storages autograd saves for the backward "
    "pass (saved-tensor hooks). `sdpa`, `eager`: the model's own attention; "
    "`lipschitz_norm`: after `lipschitz_normalize(model)` (LipschitzNorm, Eq. 19, alpha 1). "
    "`time / own`, `memory / own`: relative to the first row of the size (`sdpa`, or `eager` "
    "for a model that takes no SDPA). "
    "Batches are padded: the second half of the sequences ends in 16 padding tokens. Gemma-2 "
    "(`gemma2`): a causal decoder whose layers alternate sliding-window (64) and full "
    "attention, its scores soft-capped at 50 (`lipschitz_norm`: after the norm); transformers "
    "refuses SDPA for it (no soft-cap there). The "
    "machine was shared with other work (two training runs on its two cores) while this ran, "
    "so absolute times are noisy; the ratios between attentions, timed in turn, less so."
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="tiny,base,gemma2", help="subset of " + ",".join(SIZES))
    parser.add_argument("--repeats", type=int, default=10, help="timed steps (median)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--out", default="results/bench")
    parser.add_argument("--smoke", action="store_true", help="tiny only, 2 timed steps")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeats = "tiny", 2
    return args


def build(size: str, attention: str) -> tuple[torch.nn.Module, dict] | None:
    """The model of ``size`` with ``attention`` and its padded batch (same seed for all), or
    ``None`` where the model does not take that attention (Gemma-2: SDPA)."""
    name, config, batch, length = SIZES[size]
    torch.manual_seed(0)
    model_class = getattr(transformers, name)
    model = model_class(model_class.config_class(**config))
    if attention == "lipschitz_norm":
        lipschitz_normalize(model)
    else:
        try:
            model.set_attn_implementation(attention)
        except ValueError:
            return None
    ids = torch.randint(0, model.config.vocab_size, (batch, length))
    mask = torch.ones_like(ids)
    mask[batch // 2 :, -16:] = 0
    return model.train(), {"input_ids": ids, "attention_mask": mask}


def step(model: torch.nn.Module, inputs: dict) -> float:
    """Milliseconds of one forward and backward pass."""
    start = time.perf_counter()
    model(**inputs).last_hidden_state.sum().backward()
    return 1e3 * (time.perf_counter() - start)


def saved_megabytes(model: torch.nn.Module, inputs: dict) -> float:
    """MB of the distinct storages autograd saves for one step's backward pass."""
    sizes = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        sizes[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(**inputs).last_hidden_state.sum().backward()
    return sum(sizes.values()) / 2**20


def measure(size: str, repeats: int) -> list[dict]:
    """Every attention of one size, their steps timed in turn after one warm-up each."""
    built = {attention: build(size, attention) for attention in ATTENTIONS}
    runs = {attention: run for attention, run in built.items() if run is not None}
    times: dict[str, list[float]] = {attention: [] for attention in runs}
    for repeat in range(1 + repeats):
        for attention, (model, inputs) in runs.items():
            ms = step(model, inputs)
            if repeat:
                times[attention].append(ms)
    name, config, batch, length = SIZES[size]
    rows = []
    for attention, (model, inputs) in runs.items():
        rows.append(
            {
                "size": size,
                "model": name,
                "hidden": config["hidden_size"],
                "layers": config["num_hidden_layers"],
                "batch x length": f"{batch} x {length}",
                "attention": attention,
                "ms": statistics.median(times[attention]),
                "saved_mb": saved_megabytes(model, inputs),
            }
        )
    own = rows[0]  # the model's own attention: SDPA, or eager where it takes no SDPA
    for row in rows:
        row["time / own"] = row["ms"] / own["ms"]
        row["memory / own"] = row["saved_mb"] / own["saved_mb"]
    return rows


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    env = bench_environment.environment(
        "cpu", transformers=transformers.__version__, repeats=args.repeats
    )
    rows = []
    for size in args.sizes.split(","):
        rows += measure(size, args.repeats)
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
    lines = bench_environment.header(
        "LipschitzNorm in Hugging Face models (BERT encoder, Gemma-2 decoder)", env
    )
    bench_environment.write_results(Path(args.out), "huggingface", pd.DataFrame(rows),
                                    [*lines, "", NOTE])  # fmt: skip


if __name__ == "__main__":
    main()
