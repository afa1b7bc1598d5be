#pragma once
// Training-time augmentation of image samples ({channels, height, width}): what a unit applies to each
// training batch, drawn from the unit's seed so that a replay or a resumed run draws the same crops and
// flips. Validation and test examples are never augmented. Not a preparation parameter: the prepared
// shards hold the plain images, so changing it does not prepare the data again.

namespace cerebro::datasets {

struct Augmentation {
  bool random_crop = false;  // pad by crop_padding zeros on each side, crop back to the size at random
  int crop_padding = 4;
  bool hflip = false;  // mirror left-right with probability 1/2
  bool any() const { return random_crop || hflip; }
};

}  // namespace cerebro::datasets
