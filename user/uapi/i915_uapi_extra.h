/* SPDX-License-Identifier: MIT */
/*
 * gpuwatch: hand-written supplement to libdrm's <i915_drm.h>.
 *
 * Debian 12 ships libdrm 2.4.114, whose i915_drm.h matches the kernel uapi
 * of about Linux 6.1.  This file adds, in our own words, only what that copy
 * lacks and a decoder of current i915 ioctls needs.  Everything else
 * (GEM_CREATE_EXT memory regions / protected content, GEM_MMAP_OFFSET incl.
 * I915_MMAP_OFFSET_FIXED, CONTEXT_CREATE_EXT_SETPARAM, VM_CREATE,
 * EXECBUFFER2_WR with I915_EXEC_FENCE_OUT / FENCE_ARRAY / timeline fences,
 * PERF_OPEN) is already in libdrm 2.4.114 and is used from there.
 *
 * Checked against include/uapi/drm/i915_drm.h of Linux 6.17 and drm-next
 * (2026-04): nothing else in those areas is missing, and no existing layout
 * changed.
 *
 * Rules:
 *  - #define constants are guarded with #ifndef and spelled exactly like
 *    upstream (same tokens), so a newer i915_drm.h before or after this
 *    file is harmless.
 *  - Upstream enum members cannot be tested with #ifndef; their values are
 *    given as GW_-prefixed macros instead of redefining the names.
 *  - New structs get a gw_ prefix and never clash.
 * Include after (or instead of) <i915_drm.h>; needs -I/usr/include/libdrm.
 */
#pragma once

#include <i915_drm.h>
#include <linux/types.h>
#include <stddef.h> /* offsetof */

#ifdef __cplusplus
#define GW_I915_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define GW_I915_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* The libdrm structs embedded below: sanity-check their sizes. */
GW_I915_STATIC_ASSERT(sizeof(struct i915_user_extension) == 32, "i915_user_extension size");
GW_I915_STATIC_ASSERT(sizeof(struct i915_engine_class_instance) == 4, "i915_engine_class_instance size");

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_I915_GEM_CREATE_EXT: PAT index extension                         */
/* ------------------------------------------------------------------------ */

/*
 * Extension name 2 on GEM_CREATE_EXT: choose the PAT (cache policy) index of
 * the object.  include/uapi/drm/i915_drm.h, Linux 6.5+.
 */
#ifndef I915_GEM_CREATE_EXT_SET_PAT
#define I915_GEM_CREATE_EXT_SET_PAT 2
#endif

/*
 * Follows struct drm_i915_gem_create_ext_set_pat, include/uapi/drm/i915_drm.h,
 * Linux 6.5+ (unchanged in current upstream).  base.name ==
 * I915_GEM_CREATE_EXT_SET_PAT; pat_index is platform specific (MTL+ / PVC).
 */
struct gw_drm_i915_gem_create_ext_set_pat {
	struct i915_user_extension base; /* 32 bytes: next_extension, name, flags, rsvd[4] */
	__u32 pat_index;
	__u32 rsvd; /* must be zero */
};
GW_I915_STATIC_ASSERT(sizeof(struct gw_drm_i915_gem_create_ext_set_pat) == 40,
		      "gw_drm_i915_gem_create_ext_set_pat size");
GW_I915_STATIC_ASSERT(offsetof(struct gw_drm_i915_gem_create_ext_set_pat, base) == 0,
		      "gw_drm_i915_gem_create_ext_set_pat.base offset");
GW_I915_STATIC_ASSERT(offsetof(struct gw_drm_i915_gem_create_ext_set_pat, pat_index) == 32,
		      "gw_drm_i915_gem_create_ext_set_pat.pat_index offset");
GW_I915_STATIC_ASSERT(offsetof(struct gw_drm_i915_gem_create_ext_set_pat, rsvd) == 36,
		      "gw_drm_i915_gem_create_ext_set_pat.rsvd offset");

/* ------------------------------------------------------------------------ */
/* Context parameters (CONTEXT_SETPARAM / GETPARAM, CONTEXT_CREATE_EXT_SETPARAM) */
/* ------------------------------------------------------------------------ */

/* libdrm 2.4.114 stops at I915_CONTEXT_PARAM_PROTECTED_CONTENT (0xd). */

/* Boolean: ask for low-latency frequency management of this context.
 * include/uapi/drm/i915_drm.h, Linux 6.10+; see I915_PARAM_HAS_CONTEXT_FREQ_HINT. */
#ifndef I915_CONTEXT_PARAM_LOW_LATENCY
#define I915_CONTEXT_PARAM_LOW_LATENCY		0xe
#endif

/* Set-only: load a saved context image (debug kernels only, built with
 * CONFIG_DRM_I915_REPLAY_GPU_HANGS_API).  value is a user pointer to struct
 * gw_i915_gem_context_param_context_image.  include/uapi/drm/i915_drm.h,
 * Linux 6.11+. */
#ifndef I915_CONTEXT_PARAM_CONTEXT_IMAGE
#define I915_CONTEXT_PARAM_CONTEXT_IMAGE	0xf
#endif

/* flags: 'engine' holds an index into the context's engine map rather than
 * a class/instance pair. */
#ifndef I915_CONTEXT_IMAGE_FLAG_ENGINE_INDEX
#define I915_CONTEXT_IMAGE_FLAG_ENGINE_INDEX (1u << 0)
#endif

/*
 * Follows struct i915_gem_context_param_context_image,
 * include/uapi/drm/i915_drm.h, Linux 6.11+ (unchanged).  Upstream declares
 * it packed; its natural layout has no padding (24 bytes, u64 at 16), so
 * sizes and offsets are identical without the attribute.
 */
struct gw_i915_gem_context_param_context_image {
	struct i915_engine_class_instance engine; /* 4 bytes: class, instance */
	__u32 flags; /* I915_CONTEXT_IMAGE_FLAG_* */
	__u32 size;  /* bytes at 'image' */
	__u32 mbz;
	__u64 image; /* user pointer to the image */
};
GW_I915_STATIC_ASSERT(sizeof(struct gw_i915_gem_context_param_context_image) == 24,
		      "gw_i915_gem_context_param_context_image size");
GW_I915_STATIC_ASSERT(offsetof(struct gw_i915_gem_context_param_context_image, engine) == 0,
		      "gw_i915_gem_context_param_context_image.engine offset");
GW_I915_STATIC_ASSERT(offsetof(struct gw_i915_gem_context_param_context_image, flags) == 4,
		      "gw_i915_gem_context_param_context_image.flags offset");
GW_I915_STATIC_ASSERT(offsetof(struct gw_i915_gem_context_param_context_image, size) == 8,
		      "gw_i915_gem_context_param_context_image.size offset");
GW_I915_STATIC_ASSERT(offsetof(struct gw_i915_gem_context_param_context_image, image) == 16,
		      "gw_i915_gem_context_param_context_image.image offset");

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_I915_GETPARAM parameter ids                                      */
/* ------------------------------------------------------------------------ */

/* libdrm 2.4.114 stops at I915_PARAM_HAS_USERPTR_PROBE (56). */
#ifndef I915_PARAM_OA_TIMESTAMP_FREQUENCY
#define I915_PARAM_OA_TIMESTAMP_FREQUENCY 57 /* Linux 6.2+: OA timestamp Hz (perf) */
#endif
#ifndef I915_PARAM_PXP_STATUS
#define I915_PARAM_PXP_STATUS 58 /* Linux 6.5+: protected-content readiness */
#endif
#ifndef I915_PARAM_HAS_CONTEXT_FREQ_HINT
#define I915_PARAM_HAS_CONTEXT_FREQ_HINT 59 /* Linux 6.10+: CONTEXT_PARAM_LOW_LATENCY works */
#endif

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_I915_PERF_OPEN                                                  */
/* ------------------------------------------------------------------------ */

/*
 * enum drm_i915_perf_property_id gained two members after libdrm 2.4.114
 * (include/uapi/drm/i915_drm.h, Linux 6.4+): select the OA unit by engine.
 * Values of DRM_I915_PERF_PROP_OA_ENGINE_CLASS / _INSTANCE.
 */
#define GW_I915_PERF_PROP_OA_ENGINE_CLASS    9
#define GW_I915_PERF_PROP_OA_ENGINE_INSTANCE 10

/*
 * enum drm_i915_oa_format (value of DRM_I915_PERF_PROP_OA_FORMAT) gained
 * four members; Linux 6.2+ for the first two (MTL OAR/OAG), 6.4+ for the
 * OAM (media) ones.
 */
#define GW_I915_OAR_FORMAT_A32u40_A4u32_B8_C8 11
#define GW_I915_OA_FORMAT_A24u40_A14u32_B8_C8 12
#define GW_I915_OAM_FORMAT_MPEC8u64_B8_C8     13
#define GW_I915_OAM_FORMAT_MPEC8u32_B8_C8     14
/*
 * Note: the *_MAX members of both enums are "non-ABI" and differ between
 * libdrm 2.4.114 (I915_OA_FORMAT_MAX 11, DRM_I915_PERF_PROP_MAX 9) and
 * current kernels (15, 11); never use them to bound decoded values.
 */

/* ------------------------------------------------------------------------ */
/* DRM_IOCTL_I915_QUERY item id                                              */
/* ------------------------------------------------------------------------ */

/* include/uapi/drm/i915_drm.h, Linux 6.9+: report the GuC submission
 * interface version. */
#ifndef DRM_I915_QUERY_GUC_SUBMISSION_VERSION
#define DRM_I915_QUERY_GUC_SUBMISSION_VERSION	7
#endif

/* Follows struct drm_i915_query_guc_submission_version,
 * include/uapi/drm/i915_drm.h, Linux 6.9+ (unchanged). */
struct gw_drm_i915_query_guc_submission_version {
	__u32 branch;
	__u32 major;
	__u32 minor;
	__u32 patch;
};
GW_I915_STATIC_ASSERT(sizeof(struct gw_drm_i915_query_guc_submission_version) == 16,
		      "gw_drm_i915_query_guc_submission_version size");
GW_I915_STATIC_ASSERT(offsetof(struct gw_drm_i915_query_guc_submission_version, patch) == 12,
		      "gw_drm_i915_query_guc_submission_version.patch offset");
