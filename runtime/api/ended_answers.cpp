#include "runtime/api/ended_answers.hpp"

#include <algorithm>

namespace cerebro::api {

std::optional<std::string> EndedAnswers::find(const std::string& experiment) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = answers_.find(experiment);
  if (it == answers_.end()) return std::nullopt;
  return it->second.second;
}

void EndedAnswers::keep(const std::string& experiment, std::string body) {
  std::lock_guard<std::mutex> lock(mutex_);
  answers_[experiment] = {++kept_, std::move(body)};
  while (answers_.size() > capacity_) {
    auto oldest = std::min_element(answers_.begin(), answers_.end(),
                                   [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
    answers_.erase(oldest);
  }
}

}  // namespace cerebro::api
