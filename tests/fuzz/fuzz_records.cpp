// libFuzzer target: the tracer's record stream into the daemon's model, built with the model's
// garbage-collection oracle (GW_MODEL_CHECK_GC: after every record the reference counts are
// exact and nothing is left that a full collection would drop; it aborts otherwise). The input
// is a run of records framed as in the ring buffer (each header's `size`); a record of an
// unknown process makes the process known and is applied again, as the daemon does after its
// snapshot. At the end the manifest is rendered and must read back.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "event_abi.hpp"
#include "manifest/manifest.hpp"
#include "model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gw::Model model("/sys/fs/cgroup/fuzz");
	std::size_t at = 0;
	while (at + sizeof(gw_hdr) <= size) {
		gw_hdr h;
		std::memcpy(&h, data + at, sizeof h);
		std::size_t n = h.size < sizeof(gw_hdr) || h.size > size - at ? size - at : h.size;
		std::span<const std::byte> rec(reinterpret_cast<const std::byte *>(data + at), n);
		if (model.apply(rec) == gw::ApplyStatus::unknown_process) {
			model.add_process(h.tgid, "fuzz");
			model.apply(rec);
		}
		at += n;
	}
	gw::manifest::Manifest m = model.manifest();
	gw::manifest::parse(gw::manifest::serialize(m), "rendered.json"); // throws (a finding) if not
	return 0;
}
