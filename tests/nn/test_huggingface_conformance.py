"""Every installed transformers architecture with a tiny random model (tests/nn/hf_tiny.py) is,
after ``lipschitz_normalize``, either normalised (``norm=None`` gives its own outputs, the norm
changes them) or refused at conversion (one line naming a class); none is left silently
unnormalised. Slow: one model per architecture, built and run three times."""

import pytest
import torch
from hf_tiny import architectures, tiny

from lipnorm_exp.nn import lipschitz_normalize

transformers = pytest.importorskip("transformers")


def first_output(model, inputs):
    torch.manual_seed(0)  # the same draws each call (ViT-MAE masks patches at random)
    with torch.no_grad():
        out = model(**inputs)
    hidden = getattr(out, "last_hidden_state", None)
    return out[0] if hidden is None else hidden


@pytest.mark.slow
@pytest.mark.parametrize("model_type", architectures())
def test_every_architecture_is_normalised_or_refused_at_conversion(model_type):
    built = tiny(model_type)
    if built is None:
        pytest.skip(f"no tiny {model_type} from its default config")
    model, inputs = built
    want = first_output(model, inputs)
    try:
        lipschitz_normalize(model, norm=None)
    except ValueError as error:
        message = str(error)
        assert message.startswith("lipschitz_normalize: ") and "\n" not in message
        return
    torch.testing.assert_close(first_output(model, inputs), want, atol=1e-4, rtol=1e-4)
    lipschitz_normalize(model, alpha=0.5)
    # a model left unnormalised computes its own outputs bit for bit
    assert not torch.equal(first_output(model, inputs), want)
