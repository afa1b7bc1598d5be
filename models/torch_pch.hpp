#pragma once
// Precompiled header for the translation units that include LibTorch.
// Only models/ includes torch: everything else talks to it through the torch-free
// API in models/unit_trainer.hpp, which keeps the build fast.
#include <torch/script.h>
#include <torch/torch.h>
