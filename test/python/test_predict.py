"""Running a model file locally as `cerebro predict` does: its model info
(the extra file cerebro/model_info.json) normalises the examples, the task
turns outputs into probabilities or targets."""
import io
import json

import pytest

torch = pytest.importorskip("torch")

from cerebro import predict  # noqa: E402
from cerebro.errors import CerebroError  # noqa: E402


class Linear(torch.nn.Module):
    def __init__(self, features: int, outputs: int):
        super().__init__()
        self.fc = torch.nn.Linear(features, outputs)

    def forward(self, x):
        return self.fc(x.flatten(1))


def model_file(module, info):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(module), buffer, _extra_files={predict.MODEL_INFO_FILE: json.dumps(info)})
    return buffer.getvalue()


IMAGE_INFO = {"task": "classification", "sample_shape": [1, 2, 2], "num_classes": 3, "class_names": ["a", "b", "c"],
              "normalization": {"mode": "global", "mean": [0.5], "stddev": [0.25]}}


def test_the_model_info_travels_inside_the_file():
    module, info = predict.load_model(model_file(Linear(4, 3), IMAGE_INFO))
    assert info == IMAGE_INFO
    _, none = predict.load_model(model_file(Linear(4, 3), {}))
    assert none == {}


def test_pixels_are_scaled_and_normalised_as_the_run_did():
    torch.manual_seed(0)
    net = Linear(4, 3)
    module, info = predict.load_model(model_file(net, IMAGE_INFO))
    pixels = torch.tensor([[[[0, 255], [128, 64]]], [[[10, 20], [30, 40]]]], dtype=torch.uint8)
    expected = net((pixels.float() / 255 - 0.5) / 0.25).softmax(1)
    got = predict.predict(module, info, pixels)
    assert torch.allclose(got, expected, atol=1e-6)
    assert torch.allclose(got.sum(1), torch.ones(2))
    # One example without the batch dimension, flat rows and nested lists give the same.
    assert torch.allclose(predict.predict(module, info, pixels[0, 0:1]), expected[:1], atol=1e-6)
    assert torch.allclose(predict.predict(module, info, pixels.reshape(2, 4)), expected, atol=1e-6)
    floats = (pixels.float() / 255).tolist()
    assert torch.allclose(predict.predict(module, info, floats), expected, atol=1e-6)


def test_per_feature_normalisation_and_regression_targets_in_their_units():
    torch.manual_seed(1)
    net = Linear(2, 2)
    info = {"task": "regression", "sample_shape": [2], "num_classes": 2,
            "normalization": {"mode": "per_feature", "mean": [1.0, 10.0], "stddev": [2.0, 0.0]},
            "target_mean": [100.0, -5.0], "target_stddev": [10.0, 0.5]}
    module, info = predict.load_model(model_file(net, info))
    rows = torch.tensor([[3.0, 12.0], [1.0, 10.0]])
    standardised = net((rows - torch.tensor([1.0, 10.0])) / torch.tensor([2.0, 1.0]))
    expected = standardised * torch.tensor([10.0, 0.5]) + torch.tensor([100.0, -5.0])
    assert torch.allclose(predict.predict(module, info, rows), expected, atol=1e-5)


def test_multilabel_outputs_are_label_probabilities():
    net = Linear(2, 3)
    info = {"task": "multilabel", "sample_shape": [2], "normalization": {"mean": [], "stddev": []}}
    rows = torch.tensor([[0.5, -1.0]])
    assert torch.allclose(predict.predict(*predict.load_model(model_file(net, info)), rows), net(rows).sigmoid())


def test_examples_of_another_shape_or_task_are_refused():
    module, info = predict.load_model(model_file(Linear(4, 3), IMAGE_INFO))
    with pytest.raises(CerebroError, match=r"shape \[2, 5\] do not fit the model's sample shape \[1, 2, 2\]"):
        predict.predict(module, info, torch.zeros(2, 5))
    with pytest.raises(CerebroError, match="cerebro predict"):
        predict.predict(module, dict(info, task="captioning"), torch.zeros(1, 1, 2, 2))
