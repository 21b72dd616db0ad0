// The model's side of virtio_gpu ioctls: buffers made by RESOURCE_CREATE with their resource
// parameters, and which buffers had their host copy written (TRANSFER_TO_HOST). MAP decodes
// as MODE_MAP_DUMB's grant (drm_decode_virtio_gpu.cpp).
#include "model_ops.hpp"

namespace gw
{

bool ModelOps::apply_virtio_gpu(DrmFile &f, const drm::Op &o)
{
	if (const auto *x = std::get_if<drm::VirtioResourceCreate>(&o)) {
		// the kernel's object: `size` rounded up to pages, one page when 0
		uint64_t size = x->size ? page_up(x->size) : kPageSize;
		add_handle(f, x->handle, new_object(size), "virtio_gpu.resource_create",
			   {{"target", x->target},
			    {"format", x->format},
			    {"bind", x->bind},
			    {"width", x->width},
			    {"height", x->height},
			    {"depth", x->depth},
			    {"array_size", x->array_size},
			    {"last_level", x->last_level},
			    {"nr_samples", x->nr_samples},
			    {"flags", x->flags},
			    {"size", x->size},
			    {"stride", x->stride},
			    {"res_handle", x->res_handle}});
		return true;
	}
	if (const auto *x = std::get_if<drm::VirtioTransferToHost>(&o)) {
		Handle &h = known_handle(f, x->handle);
		if (nlohmann::json a = h.attrs(); !a.is_object() || !a.value("host_uploaded", false)) {
			h.set_attr("host_uploaded", true);
			changed = true;
		}
		return true;
	}
	return false;
}

} // namespace gw
