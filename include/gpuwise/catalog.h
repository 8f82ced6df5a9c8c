// gpuwise::Catalog: the accelerators (memory, bandwidth, peak FLOP/s) and cloud offerings (instance
// types, regions, on-demand / spot / reserved prices), each figure with its source and date.
//
// Ownership: a Catalog is a cheap handle on shared, immutable data; copies share it. Results
// computed from a catalog keep that data alive, so a result stays valid after its Catalog handle
// is gone or has been changed by apply_overrides (which changes only this handle's copy).
// Thread safety: const member functions may be called from many threads at once;
// apply_overrides needs the handle to itself.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise {

class Catalog {
 public:
  // The catalog compiled into the library: the same as the CLI's without --catalog.
  // Throws gpuwise::Error only for a broken build.
  static Catalog embedded();

  // Adds or replaces entries from a folder of catalog CSVs (accelerators.csv, offerings.csv,
  // SkyPilot layout through `gpuwise catalog import`), as `gpuwise --catalog DIR` does.
  // Throws gpuwise::Error naming the file, line and field of a bad row; the handle is unchanged then.
  void apply_overrides(const std::string& folder);

  std::size_t accelerator_count() const;
  std::size_t offering_count() const;

  // `gpuwise catalog accelerators --format json`, byte for byte: these names (empty: all) with at
  // least min_vram_gib. Throws gpuwise::Error for a name the catalog lacks (with the closest).
  std::string accelerators_json(const std::vector<std::string>& names = {}, double min_vram_gib = 0) const;

  // `gpuwise catalog offerings --format json`'s filters; every one left empty keeps all.
  struct OfferingFilter {
    std::vector<std::string> clouds, regions, accelerators;  // regions: prefixes (us-east, europe-)
    std::string geo;                                         // us, europe, asia
    std::string pricing = "on-demand";                       // filter and sort by: spot, reserved-1y, reserved-3y
    double min_vram_gib = 0;
    std::optional<double> max_usd_per_hour;                  // per instance-hour
    int limit = 0;                                           // at most this many; 0: all
  };
  // The offerings passing `filter`, cheapest first, as that command prints them. Throws
  // gpuwise::Error naming the field at fault.
  std::string offerings_json(const OfferingFilter& filter) const;
  std::string offerings_json() const { return offerings_json(OfferingFilter{}); }

  // For the library's own use.
  struct Impl;
  const std::shared_ptr<const Impl>& impl() const { return impl_; }

 private:
  explicit Catalog(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace gpuwise
