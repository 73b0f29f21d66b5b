#pragma once

namespace kforge::runner {

// The first Landlock ABI versions that restrict TCP and that have scopes (signals, abstract sockets).
inline constexpr int kLandlockTcpAbi = 4;
inline constexpr int kLandlockScopeAbi = 6;

}  // namespace kforge::runner
