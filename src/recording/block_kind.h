// What a tracked block is known to be by identity, as the framework tells it
// (MarkBlock): the storage of a model's parameter, of a parameter's gradient, of an
// optimizer's state, or a tensor handed to a model's forward. Kept with the block in the
// live-block table for its whole life, and in the record of its free; the report derives
// each block's memory category from it and from when the block lived.
#ifndef PADDLE_PROF_SRC_BLOCK_KIND_H_
#define PADDLE_PROF_SRC_BLOCK_KIND_H_

#include <cstdint>

namespace paddle_prof::internal {

// The low bits: one identity, the first in this order winning over the later ones.
enum BlockIdentity : uint8_t {
  kNoIdentity = 0,
  kParameterBlock = 1,
  kGradientBlock = 2,
  kOptimizerStateBlock = 3,
};
constexpr uint8_t kIdentityMask = 0x3;
// A flag beside the identity: the block was handed to a root module's forward.
constexpr uint8_t kHandedToModule = 0x4;
// Every kind fits these bits: the table and the records keep no more.
constexpr uint8_t kKindBits = 0x7;

inline uint8_t IdentityOf(uint8_t kind) { return kind & kIdentityMask; }

// `kind` with `more` told of it too: the first identity in the order above, the flags of
// both.
inline uint8_t MergeKinds(uint8_t kind, uint8_t more) {
  const uint8_t a = IdentityOf(kind), b = IdentityOf(more);
  const uint8_t identity = a == kNoIdentity ? b : (b == kNoIdentity || a < b ? a : b);
  return static_cast<uint8_t>(identity | ((kind | more) & ~kIdentityMask & kKindBits));
}

}  // namespace paddle_prof::internal

#endif  // PADDLE_PROF_SRC_BLOCK_KIND_H_
