// ModelExpress's VmmArena design in C++, as the baseline of issue 23: what the kernel's
// malloc+free pair is measured against. Keel's own code of the design, not ModelExpress's:
//   - a CAS bump of an atomic offset over a reserved range (no reuse of addresses);
//   - one shared in-flight counter, entered around every malloc and free, and an OPEN/CLOSED
//     state checked after entering, so that a close that sets CLOSED and then waits for the
//     counter to reach zero sees every call in progress finish;
//   - the allocation table: std::unordered_map under one std::mutex;
//   - a no-op backend (a handle counter), as bench's NoOpBackend is for the JVM.
//
// Metric (the same as DeviceBufferScaling's raw pair): N fresh std::threads share one arena,
// each makes P malloc(4096)+free pairs after a common start; a repetition's figure is the wall
// time from the first thread's start to the last one's end divided by N x P (aggregate ns per
// pair). P is calibrated so that a repetition lasts at least a second; repetitions alternate
// between the thread counts. Prints one line "pair <label> <threads> <ns>" per repetition (the
// format of bench's PairLoop, which summarises both), then min and median per thread count.
//
// Usage: modelexpress_arena [label, default c++] [repetitions, default 5] [thread counts, default 1 2]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

constexpr uint64_t kGranularity = 4096;
constexpr uint64_t kTotalBytes = uint64_t{1} << 44;
constexpr uint64_t kBase = uint64_t{1} << 44;

class Arena {
 public:
  uint64_t malloc(uint64_t size) {
    InFlight call(in_flight_);
    if (state_.load(std::memory_order_acquire) != kOpen) throw std::runtime_error("closed");
    uint64_t aligned = (size + kGranularity - 1) & ~(kGranularity - 1);
    uint64_t seen = next_.load(std::memory_order_relaxed);
    do {
      if (seen + aligned > kTotalBytes) throw std::runtime_error("exhausted");
    } while (!next_.compare_exchange_weak(seen, seen + aligned, std::memory_order_acq_rel));
    uint64_t va = kBase + seen;
    uint64_t handle = handles_.fetch_add(1, std::memory_order_relaxed);  // the no-op backend
    std::lock_guard<std::mutex> guard(table_lock_);
    table_.emplace(va, Record{aligned, handle});
    return va;
  }

  void free(uint64_t va) {
    InFlight call(in_flight_);
    if (state_.load(std::memory_order_acquire) != kOpen) return;
    std::lock_guard<std::mutex> guard(table_lock_);
    table_.erase(va);  // the no-op backend deallocates nothing
  }

  std::size_t close_and_drain() {
    state_.store(kClosed, std::memory_order_release);
    while (in_flight_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
    std::lock_guard<std::mutex> guard(table_lock_);
    std::size_t live = table_.size();
    table_.clear();
    return live;
  }

 private:
  static constexpr int kOpen = 0;
  static constexpr int kClosed = 1;
  struct Record {
    uint64_t size;
    uint64_t handle;
  };
  struct InFlight {
    explicit InFlight(std::atomic<int>& counter) : counter_(counter) {
      counter_.fetch_add(1, std::memory_order_acq_rel);
    }
    ~InFlight() { counter_.fetch_sub(1, std::memory_order_acq_rel); }
    std::atomic<int>& counter_;
  };

  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> handles_{1};
  std::atomic<int> in_flight_{0};
  std::atomic<int> state_{kOpen};
  std::mutex table_lock_;
  std::unordered_map<uint64_t, Record> table_;
};

std::atomic<uint64_t> sink{0};

// Wall nanoseconds of `threads` fresh threads making `pairs` pairs each on one fresh arena.
int64_t run(int threads, int64_t pairs) {
  Arena arena;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      uint64_t seen = 0;
      for (int64_t i = 0; i < pairs; i++) {
        uint64_t va = arena.malloc(kGranularity);
        arena.free(va);
        seen ^= va;
      }
      sink.fetch_xor(seen, std::memory_order_relaxed);
    });
  }
  while (ready.load() != threads) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (auto& worker : workers) worker.join();
  auto end = std::chrono::steady_clock::now();
  if (arena.close_and_drain() != 0) throw std::runtime_error("records left after the pairs");
  return std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
}

int64_t calibrate(int threads) {
  int64_t pairs = 100000;
  while (true) {
    int64_t nanos = run(threads, pairs);
    if (nanos >= 1300000000) return pairs;
    pairs = std::max(pairs * 2, static_cast<int64_t>(pairs * 1.6e9 / std::max<int64_t>(nanos, 1)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "c++";
  int repetitions = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<int> counts;
  for (int i = 3; i < argc; i++) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {1, 2};
  std::vector<int64_t> pairs;
  for (int threads : counts) pairs.push_back(calibrate(threads));
  std::vector<std::vector<double>> ns(counts.size());
  for (int rep = 0; rep < repetitions; rep++) {
    for (std::size_t c = 0; c < counts.size(); c++) {
      int64_t nanos = run(counts[c], pairs[c]);
      while (nanos < 1000000000) {  // too short to count: again, longer
        pairs[c] *= 2;
        nanos = run(counts[c], pairs[c]);
      }
      ns[c].push_back(static_cast<double>(nanos) / (static_cast<double>(pairs[c]) * counts[c]));
      std::printf("pair %s %d %.2f\n", label, counts[c], ns[c].back());
    }
  }
  std::printf("# ModelExpress design in C++ (g++), aggregate ns per malloc(4096)+free pair, %d repetitions\n",
              repetitions);
  std::printf("%-8s %14s %10s %10s\n", "threads", "pairs/thread", "min ns", "median ns");
  for (std::size_t c = 0; c < counts.size(); c++) {
    std::vector<double> sorted = ns[c];
    std::sort(sorted.begin(), sorted.end());
    std::size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::printf("%-8d %14lld %10.1f %10.1f\n", counts[c], static_cast<long long>(pairs[c]), sorted[0], median);
  }
  return 0;
}
