#include "models/computing_threads.hpp"

#include <atomic>

namespace cerebro::models {

namespace {
std::atomic<int> computing_threads{0};
}  // namespace

ComputingThread::ComputingThread() { ++computing_threads; }
ComputingThread::~ComputingThread() { --computing_threads; }
int ComputingThread::count() { return computing_threads.load(); }

}  // namespace cerebro::models
