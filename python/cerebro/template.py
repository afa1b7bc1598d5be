"""cerebro.Template: a torch.nn.Module scripted into the TorchScript file a
spec's ``[space] model`` names (docs/TEMPLATES.md).

Its ``forward`` takes a batch (a tensor ``[N, *sample_shape]``, or for the
structured tasks a ``Dict[str, Tensor]``); it may bring its own objective:
``loss(output, target) -> Tensor`` (a scalar) and ``metrics(output, target)
-> Dict[str, Tensor]`` (named scalars). TorchScript compiles only what
``forward`` calls unless a method is exported, so a ``loss`` or ``metrics``
method the class defines is marked ``@torch.jit.export`` here when it is
not already (the mark is set on the class's function).
"""
import io
import re

from .errors import TemplateError

__all__ = ["Template"]

OBJECTIVE_METHODS = ("loss", "metrics")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _torch():
    try:
        import torch
    except ImportError:
        raise TemplateError("cerebro.Template needs PyTorch (Debian: apt install python3-torch)") from None
    return torch


def _default_name(module):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(module).__name__).lower()


class Template:
    """`module` scripted with torch.jit.script and checked on `example_batch`.

    `example_batch`: the inputs of one batch (a tensor or a dict of tensors),
    or a pair ``(inputs, targets)``: with the targets, ``loss`` and
    ``metrics`` are checked too, as the server's pilot batch checks them (a
    scalar loss; a dict of scalars). `name`: the file's name without ``.pt``
    (default: the class name in snake case). Attributes: ``file_name``,
    ``data`` (the TorchScript file's bytes), ``output_shape``.
    """

    def __init__(self, module, example_batch, name=None):
        torch = _torch()
        if not isinstance(module, torch.nn.Module):
            raise TemplateError("a Template scripts a torch.nn.Module, got " + type(module).__name__)
        name = name if name is not None else _default_name(module)
        if name.endswith(".pt"):
            name = name[:-3]
        if not _NAME.match(name):
            raise TemplateError("%r: a template name is letters, digits, '_', '.' and '-'" % name)
        self.name = name
        self.file_name = name + ".pt"
        _export_objective(torch, type(module))
        try:
            scripted = torch.jit.script(module)
        except Exception as e:  # TorchScript's own errors are of many types
            raise TemplateError("%s: torch.jit.script failed: %s" % (self.file_name, e)) from e
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer)  # before the check runs it: the file holds the initial state
        self.data = buffer.getvalue()
        inputs, targets = _split(example_batch)
        self.output_shape = _check(torch, scripted, inputs, targets, self.file_name)

    def __repr__(self):
        return "Template(%r, %d bytes, output %s)" % (self.file_name, len(self.data), list(self.output_shape))


def _export_objective(torch, cls):
    for method in OBJECTIVE_METHODS:
        fn = getattr(cls, method, None)
        if callable(fn) and getattr(fn, "_torchscript_modifier", None) is None and hasattr(fn, "__code__"):
            torch.jit.export(fn)


def _split(example_batch):
    if isinstance(example_batch, (tuple, list)):
        if len(example_batch) != 2:
            raise TemplateError("example_batch is the inputs, or a pair (inputs, targets); got %d items"
                                % len(example_batch))
        return example_batch[0], example_batch[1]
    return example_batch, None


def _check(torch, scripted, inputs, targets, file_name):
    was_training = scripted.training
    scripted.eval()
    try:
        with torch.no_grad():
            try:
                output = scripted(inputs)
            except Exception as e:
                raise TemplateError("%s: forward(example_batch) failed: %s" % (file_name, _reason(e))) from e
            if not isinstance(output, torch.Tensor):
                raise TemplateError("%s: forward must return a Tensor, got %s" % (file_name, type(output).__name__))
            if targets is not None:
                _check_objective(torch, scripted, output, targets, file_name)
    finally:
        scripted.train(was_training)
    return tuple(output.shape)


def _check_objective(torch, scripted, output, targets, file_name):
    if hasattr(scripted, "loss"):
        try:
            loss = scripted.loss(output, targets)
        except Exception as e:
            raise TemplateError("%s: loss(output, target) failed: %s" % (file_name, _reason(e))) from e
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise TemplateError("%s: loss(output, target) must return a scalar (one-element tensor), got shape %s"
                                % (file_name, list(getattr(loss, "shape", []))))
    if hasattr(scripted, "metrics"):
        try:
            metrics = scripted.metrics(output, targets)
        except Exception as e:
            raise TemplateError("%s: metrics(output, target) failed: %s" % (file_name, _reason(e))) from e
        if not isinstance(metrics, dict):
            raise TemplateError("%s: metrics(output, target) must return Dict[str, Tensor]" % file_name)
        for key, value in metrics.items():
            if not isinstance(value, torch.Tensor) or value.numel() != 1:
                raise TemplateError("%s: metrics(output, target)[%r] must be a scalar, got shape %s"
                                    % (file_name, key, list(getattr(value, "shape", []))))


def _reason(exc):
    """The line of a (TorchScript) error that says what went wrong: its last."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
