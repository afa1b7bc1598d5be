"""cerebro.Template: a torch.nn.Module scripted into a training template
(docs/TEMPLATES.md), its objective exported, checked on an example batch."""
import io
from typing import Dict

import pytest

torch = pytest.importorskip("torch")

import cerebro  # noqa: E402


class SmoothClassifier(torch.nn.Module):
    """docs/TEMPLATES.md's example, with loss and metrics left unmarked: Template exports them."""

    def __init__(self, features: int = 784, classes: int = 10):
        super().__init__()
        self.fc1 = torch.nn.Linear(features, 16)
        self.fc2 = torch.nn.Linear(16, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))

    def loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target, label_smoothing=0.1)

    def metrics(self, output, target) -> Dict[str, torch.Tensor]:
        return {"accuracy": (output.argmax(1) == target).float().mean()}


class PerExampleLoss(SmoothClassifier):
    @torch.jit.export
    def loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none")


class VectorMetric(SmoothClassifier):
    @torch.jit.export
    def metrics(self, output, target) -> Dict[str, torch.Tensor]:
        return {"hits": (output.argmax(1) == target).float()}


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


class Unscriptable(torch.nn.Module):
    def forward(self, x):
        return x.numpy()


def batch(n=2):
    return torch.rand(n, 1, 28, 28), torch.tensor([3, 7] * (n // 2))


def test_a_template_is_a_torchscript_file_with_its_objective():
    template = cerebro.Template(SmoothClassifier(), batch())
    assert template.file_name == "smooth_classifier.pt"
    assert template.output_shape == (2, 10)
    assert template.data.startswith(b"PK\x03\x04")
    loaded = torch.jit.load(io.BytesIO(template.data))
    x, y = batch()
    assert loaded(x).shape == (2, 10)
    assert loaded.loss(loaded(x), y).numel() == 1
    assert set(loaded.metrics(loaded(x), y)) == {"accuracy"}


def test_the_saved_state_is_the_modules_initial_one():
    module = SmoothClassifier()
    template = cerebro.Template(module, batch()[0], name="mine")
    assert template.file_name == "mine.pt"
    loaded = torch.jit.load(io.BytesIO(template.data))
    for name, value in module.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value), name
    assert module.training, "the check leaves the module's mode as it was"


def test_a_module_without_objective_is_a_plain_torchscript_model():
    template = cerebro.Template(Plain(), torch.rand(5, 4))
    loaded = torch.jit.load(io.BytesIO(template.data))
    assert not hasattr(loaded, "loss") and template.output_shape == (5, 3)


def test_forward_failing_on_the_example_is_refused_with_torchs_reason():
    with pytest.raises(cerebro.TemplateError, match=r"plain.pt: forward\(example_batch\) failed: .*mat1 and mat2"):
        cerebro.Template(Plain(), torch.rand(5, 7))


def test_a_loss_that_is_not_a_scalar_is_refused_naming_it():
    with pytest.raises(cerebro.TemplateError, match=r"loss\(output, target\) must return a scalar .*\[2\]"):
        cerebro.Template(PerExampleLoss(), batch())


def test_a_metric_that_is_not_a_scalar_is_refused_naming_it():
    with pytest.raises(cerebro.TemplateError, match=r"metrics\(output, target\)\['hits'\] must be a scalar"):
        cerebro.Template(VectorMetric(), batch())


def test_what_cannot_be_scripted_or_is_no_module_is_refused():
    with pytest.raises(cerebro.TemplateError, match="unscriptable.pt: torch.jit.script failed"):
        cerebro.Template(Unscriptable(), torch.rand(1))
    with pytest.raises(cerebro.TemplateError, match="scripts a torch.nn.Module"):
        cerebro.Template(lambda x: x, torch.rand(1))
    with pytest.raises(cerebro.TemplateError, match="template name"):
        cerebro.Template(Plain(), torch.rand(1, 4), name="a/b")


def test_a_template_in_a_dict_spec_is_attached_under_its_file_name():
    from cerebro import spec as specs
    template = cerebro.Template(SmoothClassifier(), batch())
    text, files = specs.prepare({"data": {"source": "idx", "path": "/d"},
                                 "space": {"model": [template, "mlp"], "lr": [0.01]}})
    assert 'model = ["smooth_classifier.pt", "mlp"]' in text
    assert files == {"smooth_classifier.pt": template.data}
    other = cerebro.Template(SmoothClassifier(), batch())
    with pytest.raises(ValueError, match="different names"):
        specs.prepare({"space": {"model": [template, other]}})
