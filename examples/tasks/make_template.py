import sys
from typing import Dict
import torch

class Template(torch.nn.Module):
    def __init__(self, features: int, classes: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(features, 64)
        self.fc2 = torch.nn.Linear(64, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))

    @torch.jit.export
    def loss(self, output, target):
        # cross-entropy with label smoothing: a loss the built-ins do not have
        return torch.nn.functional.cross_entropy(output, target, label_smoothing=0.1)

    @torch.jit.export
    def metrics(self, output, target) -> Dict[str, torch.Tensor]:
        probs = output.softmax(1)
        right = probs.gather(1, target.unsqueeze(1)).squeeze(1)
        return {"accuracy": (output.argmax(1) == target).float().mean(),
                "confidence": right.mean()}

torch.jit.script(Template(int(sys.argv[1]), int(sys.argv[2]))).save(sys.argv[3])
