#include "datasets/image_files.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace cerebro::datasets {

namespace {
constexpr std::array<std::string_view, 3> kImageExtensions = {".png", ".jpg", ".jpeg"};
}  // namespace

bool is_image_file(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kImageExtensions.begin(), kImageExtensions.end(), ext) != kImageExtensions.end();
}

}  // namespace cerebro::datasets
