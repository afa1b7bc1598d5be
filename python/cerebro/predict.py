"""Running a trained model locally, as `cerebro predict` does (models/predict.hpp).

A model file from Cerebro carries its "model info" in the TorchScript
archive's extra file ``cerebro/model_info.json``: the task, the example
shape, the features' normalisation (``{"mode", "mean", "stddev"}``: one
value for all features, or one per feature), class names and, for
regression, the targets' mean and stddev. Examples are normalised with it,
the model runs in eval mode, and the outputs become class probabilities
(softmax), label probabilities (sigmoid) or targets in their own units.
"""
import io
import json

from .errors import CerebroError

__all__ = ["MODEL_INFO_FILE", "load_model", "predict"]

MODEL_INFO_FILE = "cerebro/model_info.json"
BATCH = 1000


def _torch():
    try:
        import torch
    except ImportError:
        raise CerebroError("loading and running a model needs PyTorch (Debian: apt install python3-torch)") from None
    return torch


def load_model(data):
    """(module, model info dict) of a TorchScript file's bytes (info ``{}`` when it has none)."""
    torch = _torch()
    extra = {MODEL_INFO_FILE: ""}
    module = torch.jit.load(io.BytesIO(data), map_location="cpu", _extra_files=extra)
    text = extra[MODEL_INFO_FILE]
    info = json.loads(text) if text else {}
    return module, info


def examples(data, info):
    """`data` as a float tensor [N, *sample_shape], normalised as the run normalised its training data.
    Accepts a tensor, a numpy array or nested lists; one example without the batch dimension; rows of
    flat features for a sample shape of several dimensions; uint8 pixels (scaled to [0, 1] first, as the
    image loaders do)."""
    torch = _torch()
    x = data if isinstance(data, torch.Tensor) else torch.as_tensor(data)
    if x.dtype == torch.uint8:
        x = x.float() / 255.0
    x = x.float()
    shape = list(info.get("sample_shape") or [])
    if shape:
        numel = 1
        for d in shape:
            numel *= d
        if list(x.shape) == shape:
            x = x.unsqueeze(0)
        elif x.dim() >= 1 and x.numel() % numel == 0 and x[0].numel() == numel:
            x = x.reshape([x.shape[0]] + shape)
        else:
            raise CerebroError("examples of shape %s do not fit the model's sample shape %s"
                               % (list(x.shape), shape))
    norm = info.get("normalization") or {}
    mean, stddev = norm.get("mean") or [], norm.get("stddev") or []
    if mean and len(mean) == len(stddev):
        m = torch.tensor(mean, dtype=torch.float32)
        s = torch.tensor([v if v != 0 else 1.0 for v in stddev], dtype=torch.float32)
        flat = x.reshape(x.shape[0], -1)
        if len(mean) not in (1, flat.shape[1]):
            raise CerebroError("the model's normalisation has %d values for examples of %d features"
                               % (len(mean), flat.shape[1]))
        x = ((flat - m) / s).reshape(x.shape)
    return x


def predict(module, info, data):
    """The model's predictions for `data` (see examples()): classification [N, classes] probabilities,
    multilabel [N, labels] probabilities, regression [N, targets] in the targets' units; any other
    task, the model's raw outputs."""
    torch = _torch()
    task = info.get("task", "classification")
    if task in ("captioning", "detection", "language_model"):
        raise CerebroError("predict() runs classification, regression and multilabel models; for %s use "
                           "`cerebro predict` or `cerebro generate`" % task)
    x = examples(data, info)
    module.eval()
    outputs = []
    with torch.no_grad():
        for begin in range(0, x.shape[0], BATCH):
            outputs.append(module(x[begin:begin + BATCH]))
    output = torch.cat(outputs) if outputs else torch.zeros(0)
    if task == "classification":
        return output.softmax(1)
    if task == "multilabel":
        return output.sigmoid()
    if task == "regression":
        mean, stddev = info.get("target_mean") or [], info.get("target_stddev") or []
        if mean and len(mean) == output.shape[1]:
            s = torch.tensor([v if v > 0 else 1.0 for v in stddev], dtype=output.dtype)
            output = output * s + torch.tensor(mean, dtype=output.dtype)
    return output
