#pragma once
// Which files are images: the extensions stb decodes for us (PNG and JPEG),
// in any letter case. One rule for the image folders the ETL walks and the
// paths `cerebro predict` is given.

#include <filesystem>

namespace cerebro::datasets {

bool is_image_file(const std::filesystem::path& path);

}  // namespace cerebro::datasets
