#include "runtime/spec/spec_choices.hpp"

#include <array>

#include "runtime/base/enum_names.hpp"

namespace cerebro {

namespace {

constexpr std::array<EnumName<ImageColor>, 2> kColorNames = {
    {{ImageColor::grayscale, "grayscale"}, {ImageColor::rgb, "rgb"}}};
constexpr std::array<EnumName<Augment>, 2> kAugmentNames = {
    {{Augment::random_crop, "random_crop"}, {Augment::hflip, "hflip"}}};
constexpr std::array<EnumName<Pruner>, 2> kPrunerNames = {{{Pruner::asha, "asha"}, {Pruner::hyperband, "hyperband"}}};

}  // namespace

std::string to_string(ImageColor color) { return enum_name(kColorNames, color); }
std::optional<ImageColor> parse_image_color(const std::string& name) {
  return enum_named<ImageColor>(kColorNames, name);
}
const std::vector<std::string>& image_color_names() {
  static const std::vector<std::string> names = enum_names(kColorNames);
  return names;
}

std::string to_string(Augment augment) { return enum_name(kAugmentNames, augment); }
std::optional<Augment> parse_augment(const std::string& name) { return enum_named<Augment>(kAugmentNames, name); }
const std::vector<std::string>& augment_names() {
  static const std::vector<std::string> names = enum_names(kAugmentNames);
  return names;
}

std::string to_string(Pruner pruner) { return enum_name(kPrunerNames, pruner, ""); }
std::optional<Pruner> parse_pruner(const std::string& name) { return enum_named<Pruner>(kPrunerNames, name); }
const std::vector<std::string>& pruner_names() {
  static const std::vector<std::string> names = enum_names(kPrunerNames);
  return names;
}

}  // namespace cerebro
