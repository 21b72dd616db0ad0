// KMS state of a DRM file: the framebuffers it made and the CRTCs and planes that showed them
// at dump.
//
// At dump the framebuffers come from the manifest (MODE_ADDFB/ADDFB2, decoded by the daemon);
// the CRTCs showing them are asked of the kernel through the dumped file (GETRESOURCES,
// GETCRTC, and the connectors whose encoder drives the CRTC), and so are the other planes
// showing them (GETPLANE), which come back where the file's own SETPLANE put them (the
// manifest's display.planes); legacy cursors (MODE_CURSOR) come back where the file's last
// calls put them (display.cursors). The property blobs the file made (MODE_CREATEPROPBLOB) are read
// through it (GETPROPBLOB), and whether it is DRM master is asked of the kernel. At restore,
// inside the task, each framebuffer and blob is made again on the restored file with the same
// id where the device lets it (KMS object ids are per device and the lowest free one is given:
// objects made on the way are removed again), then each CRTC is set again (which needs DRM
// master: the restored file has it when no other file holds it), then each other plane; last,
// master is taken back (SET_MASTER, when no other file holds it) or dropped as it was. What
// cannot be done is logged, never fatal.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "manifest/json_reader.hpp"
#include "manifest/manifest.hpp"

namespace gwcriu
{

struct KmsPlane {
	uint32_t handle = 0, pitch = 0, offset = 0;
	uint64_t modifier = 0;
};
struct KmsFramebuffer {
	uint32_t id = 0, width = 0, height = 0;
	bool legacy = false;                  // ADDFB: bpp and depth; else ADDFB2
	uint32_t bpp = 0, depth = 0;          // ADDFB
	uint32_t pixel_format = 0, flags = 0; // ADDFB2
	std::vector<KmsPlane> planes;
};
struct KmsCrtc {
	uint32_t crtc_id = 0, fb_id = 0, x = 0, y = 0;
	std::vector<uint32_t> connectors;
	nlohmann::json mode; // struct drm_mode_modeinfo, field by field
};
// A plane other than a CRTC's primary (overlay, cursor) showing one of the file's framebuffers
// where the file's own SETPLANE put it: the manifest's display.planes entry, as read back
using KmsOverlay = gw::manifest::DisplayPlane;
// A CRTC's legacy cursor where the file's last MODE_CURSOR(2) calls left it (the manifest's
// display.cursors): the buffer a handle of the file, its size and hotspot, its position
struct KmsCursor {
	uint32_t crtc_id = 0, handle = 0, width = 0, height = 0;
	int32_t hot_x = 0, hot_y = 0;
	std::optional<std::array<int32_t, 2>> position;
};
struct KmsBlob {
	uint32_t id = 0;
	std::vector<uint8_t> data;
};
struct KmsState {
	std::vector<KmsFramebuffer> framebuffers;
	std::vector<KmsCrtc> crtcs;
	std::vector<KmsOverlay> planes;
	std::vector<KmsCursor> cursors;
	std::vector<KmsBlob> blobs;
	std::optional<bool> master; // a primary node's file: DRM master at dump
	bool empty() const
	{
		return framebuffers.empty() && crtcs.empty() && planes.empty() && cursors.empty() && blobs.empty() &&
		       !master;
	}
	bool has_framebuffer(uint32_t id) const
	{
		return std::any_of(framebuffers.begin(), framebuffers.end(),
				   [&](const KmsFramebuffer &fb) { return fb.id == id; });
	}
};

// Dump: the file's framebuffers that can be made again (each plane's handle still names the
// buffer) and the CRTCs showing one of them, asked through lfd; the rest goes to *degraded.
KmsState kms_state_of(const gw::manifest::File &f, int lfd, std::vector<std::string> *degraded);

// Restore, in the task, on the restored file fd: framebuffers, blobs, CRTCs, planes, cursors,
// master.
// Returns what could not be restored, one line each (the caller logs them).
std::vector<std::string> kms_restore(int fd, const KmsState &k);

nlohmann::json kms_json(const KmsState &k);
// "kms" of a file image (absent or null: empty); handles: the file's, which planes must name
KmsState read_kms(const gw::jsonin::Obj &top, const std::vector<uint32_t> &handles);

} // namespace gwcriu
