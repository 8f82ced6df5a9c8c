// The simulator's events and their queue (the clock reads the earliest), ordered by time, then
// kind, then the order they were pushed; and a replica slot's life under autoscaling. Internal
// to src/sim.
#pragma once

#include <functional>
#include <queue>
#include <vector>

namespace gw::sim_detail {

enum class EventKind { step_done = 0, timeout = 1, sample = 2, replica_ready = 3, node_ready = 4, arrival = 5, scale_tick = 6,
                       outage = 7, outage_over = 8, expire = 9, kv_arrived = 10, kv_released = 11, kv_pull_done = 12 };

// A replica slot's life under autoscaling; without it every replica is ready throughout.
enum class Life { off, starting, ready, draining };

struct Event {
  double time;
  int kind;
  int replica;
  unsigned long long sequence;
  unsigned version;
  bool operator>(const Event& other) const {
    if (time != other.time) return time > other.time;
    if (kind != other.kind) return kind > other.kind;
    return sequence > other.sequence;
  }
};

// Pending events, earliest first. Ties in time go by kind (a step that ends frees its replica
// before an arrival at the same instant is routed), then in the order they were pushed, so a run
// never depends on the heap's layout.
class EventQueue {
 public:
  void push(Event e) {
    e.sequence = ++sequence_;
    heap_.push(e);
  }
  bool empty() const { return heap_.empty(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  unsigned long long sequence_ = 0;
};

}  // namespace gw::sim_detail
