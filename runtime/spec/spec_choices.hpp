#pragma once
// The spec's closed vocabularies that are not a kind of their own file:
// [data] color and augment, and [experiment] pruner (docs/SPEC.md). The
// parser turns their text into these values once; everything after it
// compares values. Each has one table of names (spec_choices.cpp).

#include <optional>
#include <string>
#include <vector>

namespace cerebro {

enum class ImageColor { grayscale, rgb };
std::string to_string(ImageColor color);
std::optional<ImageColor> parse_image_color(const std::string& name);
const std::vector<std::string>& image_color_names();  // grayscale, rgb

// Training-time augmentation of image samples, drawn from each unit's seed.
enum class Augment { random_crop, hflip };
std::string to_string(Augment augment);
std::optional<Augment> parse_augment(const std::string& name);
const std::vector<std::string>& augment_names();  // random_crop, hflip

// TPE's early stopping of its configs: none, or rungs as ASHA or Hyperband set them.
enum class Pruner { none, asha, hyperband };
std::string to_string(Pruner pruner);  // "" for none, as a spec without the key reads
std::optional<Pruner> parse_pruner(const std::string& name);
const std::vector<std::string>& pruner_names();  // asha, hyperband (the values the key takes)

}  // namespace cerebro
