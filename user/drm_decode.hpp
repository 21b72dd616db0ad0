// Decoding of DRM ioctl records (gw_ev_ioctl) into typed operations the model applies.
//
// The kernel dispatches DRM ioctls on the number only (type 'd'). Numbers below
// DRM_COMMAND_BASE (0x40) and from DRM_COMMAND_END (0xa0) up are core ioctls, the same for
// every driver; 0x40-0x9f are driver-private and i915 and xe give one number different
// meanings. So decoding is a function of (driver name, nr): core numbers come from one
// table, driver-private numbers from the driver's table (driver_ioctls()). Inputs are read
// from in[] (the argument at syscall entry), outputs from out[] (at exit); the BPF side
// records successful ioctls only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "event_abi.hpp"

namespace gw::drm {

// --- operations ----------------------------------------------------------------------------
struct CreateDumb {     // MODE_CREATE_DUMB
	uint32_t height = 0, width = 0, bpp = 0, flags = 0;
	uint32_t handle = 0, pitch = 0;
	uint64_t size = 0;
};
struct MapDumb {        // MODE_MAP_DUMB: fake offset granted for handle
	uint32_t handle = 0;
	uint64_t offset = 0;
};
struct DestroyDumb { uint32_t handle = 0; };   // MODE_DESTROY_DUMB
struct GemClose { uint32_t handle = 0; };      // GEM_CLOSE
struct GemFlink { uint32_t handle = 0, name = 0; };
struct GemOpen {
	uint32_t name = 0, handle = 0;
	uint64_t size = 0;
};
struct PrimeExport {    // PRIME_HANDLE_TO_FD: dmabuf is the new dma-buf's kernel file
	uint32_t handle = 0, flags = 0;
	int32_t fd = -1;
	bool cloexec = false;
	uint64_t dmabuf = 0;
};
struct PrimeImport {    // PRIME_FD_TO_HANDLE: dmabuf is the imported dma-buf's kernel file
	int32_t fd = -1;
	uint32_t handle = 0;
	uint64_t dmabuf = 0;
};
struct SyncobjCreate { uint32_t flags = 0, handle = 0; };
struct SyncobjDestroy { uint32_t handle = 0; };
struct SetClientCap { uint64_t capability = 0, value = 0; };

// An ioctl the model does not track (not a DRM ioctl, or a number with no decoder yet).
struct Ignored {
	uint32_t nr = 0;
};
// A record that cannot be decoded as what its number says (argument too short, ...).
struct Malformed {
	std::string reason;
};

using Op = std::variant<Ignored, Malformed, CreateDumb, MapDumb, DestroyDumb, GemClose, GemFlink,
                        GemOpen, PrimeExport, PrimeImport, SyncobjCreate, SyncobjDestroy,
                        SetClientCap>;

// --- tables ----------------------------------------------------------------------------------
struct IoctlDesc {
	uint32_t nr;
	const char *name;           // without the DRM_IOCTL_ prefix, e.g. "MODE_CREATE_DUMB"
	std::size_t arg_size;       // bytes of the uapi struct the decoder reads
	Op (*decode)(const gw_ev_ioctl &ev);
};

bool is_driver_nr(uint32_t nr);                                 // 0x40 <= nr < 0xa0
std::span<const IoctlDesc> core_ioctls();
std::span<const IoctlDesc> driver_ioctls(std::string_view driver); // empty: none known yet

// The decoder for `cmd` on a file of `driver` ("" if unknown), or nullptr.
const IoctlDesc *find_ioctl(std::string_view driver, uint32_t cmd);

// Decodes one record. Never throws; bad input gives Malformed.
Op decode_ioctl(std::string_view driver, const gw_ev_ioctl &ev);

// "MODE_CREATE_DUMB", or "0x<nr>" when unknown (for logs).
std::string ioctl_name(std::string_view driver, uint32_t cmd);

} // namespace gw::drm
