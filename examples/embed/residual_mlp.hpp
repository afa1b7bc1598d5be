#pragma once

// Registers "residual_mlp" as a model for the `model` hyper-parameter: a
// LibTorch module of the service's own (hyper-parameter `width`, default 32)
// that exports itself as TorchScript, so the best model becomes best_model.pt.
void register_residual_mlp();
