// The simulator's events, ordered by time, then kind, then the order they were pushed; and a
// replica slot's life under autoscaling. Internal to src/sim.
#pragma once

namespace gw::sim_detail {

enum class EventKind { step_done = 0, timeout = 1, sample = 2, replica_ready = 3, node_ready = 4, arrival = 5, scale_tick = 6,
                       outage = 7, outage_over = 8, expire = 9 };

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

}  // namespace gw::sim_detail
