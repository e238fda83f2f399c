// Kubernetes resource quantities ("500m", "2", "1.5Gi", "4G", "1e3"), as apimachinery's
// resource.Quantity reads them, for the two uses the operator has: the integer Ray is told
// (Quantity.Value(), which rounds up: "500m" CPU is 1) and an approximate float for custom
// resources. Pure; no allocation beyond the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rayjournal::model {

struct Quantity {
  long double value = 0;  // in base units (cores, bytes, devices)
  bool binary = false;    // written with a binary suffix (Ki, Mi, ...): format it so again

  // Rounded up to the next integer, as Quantity.Value(); saturates at INT64_MAX.
  int64_t ceilValue() const;
  bool isZero() const { return value == 0; }
};

// nullopt when the text is not a quantity (empty, no digits, unknown suffix, trailing bytes).
std::optional<Quantity> parseQuantity(std::string_view text);

// The canonical text apimachinery writes for a value: "2", "1500m", "4Gi", "3G"; binary suffixes
// only for whole multiples of 1024, otherwise decimal ones. Saturates at 2^63 - 1 base units.
std::string formatQuantity(const Quantity& q);

}  // namespace rayjournal::model
