// SPDX-License-Identifier: GPL-2.0
/*
 * gwi915 per-file state: contexts and VMs with i915's numbering and life cycle.
 *
 * Contexts follow i915 6.1 on gen <= 12: CONTEXT_CREATE registers a proto-context whose VM,
 * ENGINES and PROTECTED_CONTENT can still be set; its first use (GETPARAM, EXECBUFFER2)
 * finalizes it, giving it a private VM unless one was set, and those three become
 * read-only (-EINVAL). GETPARAM(VM) hands out a new VM id for the context's VM each time.
 */
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_file.h>

#include "gwi915.h"

static struct gw_vm *gw_vm_new(struct drm_device *dev)
{
	struct gw_vm *vm = kzalloc(sizeof(*vm), GFP_KERNEL);

	if (vm) {
		kref_init(&vm->ref);
		vm->serial = atomic_inc_return(&to_gw(dev)->next_vm_serial);
	}
	return vm;
}

static void gw_vm_release(struct kref *ref)
{
	kfree(container_of(ref, struct gw_vm, ref));
}

static void gw_vm_put(struct gw_vm *vm)
{
	if (vm)
		kref_put(&vm->ref, gw_vm_release);
}

static struct gw_ctx *gw_ctx_new(u32 flags)
{
	struct gw_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);

	if (ctx) {
		ctx->bannable = ctx->recoverable = ctx->persistent = true;
		ctx->single_timeline = flags & I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE;
		ctx->num_engines = -1;
	}
	return ctx;
}

static void gw_ctx_free(struct gw_ctx *ctx)
{
	gw_vm_put(ctx->vm);
	kfree(ctx->engines);
	kfree(ctx);
}

/* i915_gem_context_lookup(): first use turns a proto-context into a context. fp->lock held */
static struct gw_ctx *gw_ctx_use(struct drm_device *dev, struct gw_file *fp, u32 id)
{
	struct gw_ctx *ctx = xa_load(&fp->contexts, id);

	if (!ctx)
		return ERR_PTR(-ENOENT);
	if (!ctx->finalized) {
		if (!ctx->vm)
			ctx->vm = gw_vm_new(dev);
		if (!ctx->vm)
			return ERR_PTR(-ENOMEM);
		ctx->finalized = true;
	}
	return ctx;
}

int gw_file_open(struct drm_device *dev, struct drm_file *file)
{
	struct gw_file *fp = kzalloc(sizeof(*fp), GFP_KERNEL);
	struct gw_ctx *ctx = gw_ctx_new(0);
	int err = -ENOMEM;

	if (!fp || !ctx)
		goto err;
	ctx->vm = gw_vm_new(dev); /* the default context is a full context from the start */
	if (!ctx->vm)
		goto err;
	ctx->finalized = true;
	mutex_init(&fp->lock);
	xa_init_flags(&fp->contexts, XA_FLAGS_ALLOC1); /* allocation from 1; 0 stored here */
	xa_init_flags(&fp->vms, XA_FLAGS_ALLOC1);
	err = xa_err(xa_store(&fp->contexts, 0, ctx, GFP_KERNEL));
	if (err)
		goto err;
	fp->client_id = atomic_inc_return(&to_gw(dev)->next_client_id) - 1;
	fp->opener = get_pid(task_pid(current));
	file->driver_priv = fp;
	return 0;
err:
	if (ctx)
		gw_ctx_free(ctx);
	kfree(fp);
	return err;
}

void gw_file_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;
	struct gw_vm *vm;
	unsigned long idx;

	xa_for_each(&fp->contexts, idx, ctx) gw_ctx_free(ctx);
	xa_destroy(&fp->contexts);
	xa_for_each(&fp->vms, idx, vm) gw_vm_put(vm);
	xa_destroy(&fp->vms);
	mutex_destroy(&fp->lock);
	put_pid(fp->opener);
	kfree(fp);
}

static int gw_set_priority(struct gw_ctx *ctx, const struct drm_i915_gem_context_param *p)
{
	s64 prio = p->value;

	if (p->size)
		return -EINVAL;
	if (prio > I915_CONTEXT_MAX_USER_PRIORITY || prio < I915_CONTEXT_MIN_USER_PRIORITY)
		return -EINVAL;
	if (prio > I915_CONTEXT_DEFAULT_PRIORITY && !capable(CAP_SYS_NICE))
		return -EPERM;
	ctx->priority = prio;
	return 0;
}

static int gw_set_vm(struct gw_file *fp, struct gw_ctx *ctx, const struct drm_i915_gem_context_param *p)
{
	struct gw_vm *vm;

	if (p->size)
		return -EINVAL;
	if (upper_32_bits(p->value))
		return -ENOENT;
	vm = xa_load(&fp->vms, p->value);
	if (!vm)
		return -ENOENT;
	kref_get(&vm->ref);
	gw_vm_put(ctx->vm);
	ctx->vm = vm;
	return 0;
}

/* load balance, bond, parallel submit: accepted, not checked */
static const gw_ext_fn gw_engines_exts[] = {
	[I915_CONTEXT_ENGINES_EXT_LOAD_BALANCE] = gw_accept_ext,
	[I915_CONTEXT_ENGINES_EXT_BOND] = gw_accept_ext,
	[I915_CONTEXT_ENGINES_EXT_PARALLEL_SUBMIT] = gw_accept_ext,
};

/* The fake GT has one engine of each class 0..3 (render, copy, video, video-enhance). */
static int gw_set_engines(struct gw_ctx *ctx, const struct drm_i915_gem_context_param *p)
{
	struct i915_context_param_engines __user *user = u64_to_user_ptr(p->value);
	struct i915_engine_class_instance *engines;
	unsigned int n, i;
	u64 extensions;
	int err;

	if (ctx->num_engines >= 0)
		return -EINVAL; /* "Cannot set engines twice" */
	if (p->size < sizeof(*user) || !IS_ALIGNED(p->size - sizeof(*user), sizeof(*user->engines)))
		return -EINVAL;
	n = (p->size - sizeof(*user)) / sizeof(*user->engines);
	if (n > I915_EXEC_RING_MASK + 1)
		return -EINVAL;
	engines = kmalloc_array(n, sizeof(*engines), GFP_KERNEL);
	if (!engines && n)
		return -ENOMEM;
	err = copy_from_user(engines, user->engines, n * sizeof(*engines)) ? -EFAULT : 0;
	for (i = 0; !err && i < n; i++) {
		const struct i915_engine_class_instance *ci = &engines[i];

		if (ci->engine_class == (u16)I915_ENGINE_CLASS_INVALID &&
		    ci->engine_instance == (u16)I915_ENGINE_CLASS_INVALID_NONE)
			continue; /* an empty slot */
		if (ci->engine_class > I915_ENGINE_CLASS_VIDEO_ENHANCE || ci->engine_instance)
			err = -ENOENT;
	}
	if (!err)
		err = get_user(extensions, &user->extensions)
			      ? -EFAULT
			      : gw_user_extensions(extensions, gw_engines_exts, ARRAY_SIZE(gw_engines_exts), NULL);
	if (err) {
		kfree(engines);
		return err;
	}
	ctx->engines = engines;
	ctx->num_engines = n;
	return 0;
}

/* set_proto_ctx_param() before first use, ctx_setparam() after it. fp->lock held */
static int gw_setparam(struct gw_file *fp, struct gw_ctx *ctx, struct drm_i915_gem_context_param *p)
{
	switch (p->param) {
	case I915_CONTEXT_PARAM_NO_ERROR_CAPTURE:
		if (p->size)
			return -EINVAL;
		ctx->no_error_capture = p->value;
		return 0;
	case I915_CONTEXT_PARAM_BANNABLE:
		if (p->size)
			return -EINVAL;
		if (!p->value && !capable(CAP_SYS_ADMIN))
			return -EPERM;
		if (!p->value && ctx->protected_content)
			return -EPERM;
		ctx->bannable = p->value;
		return 0;
	case I915_CONTEXT_PARAM_RECOVERABLE:
		if (p->size)
			return -EINVAL;
		if (p->value && ctx->protected_content)
			return -EPERM;
		ctx->recoverable = p->value;
		return 0;
	case I915_CONTEXT_PARAM_PRIORITY: return gw_set_priority(ctx, p);
	case I915_CONTEXT_PARAM_SSEU:
		if (p->size < sizeof(struct drm_i915_gem_context_param_sseu))
			return -EINVAL;
		return -ENODEV; /* i915 takes SSEU settings on gen11 only */
	case I915_CONTEXT_PARAM_PERSISTENCE:
		if (p->size)
			return -EINVAL;
		ctx->persistent = p->value;
		return 0;
	case I915_CONTEXT_PARAM_VM: return ctx->finalized ? -EINVAL : gw_set_vm(fp, ctx, p);
	case I915_CONTEXT_PARAM_ENGINES: return ctx->finalized ? -EINVAL : gw_set_engines(ctx, p);
	case I915_CONTEXT_PARAM_PROTECTED_CONTENT:
		if (ctx->finalized)
			return -EINVAL;
		if (p->value && (ctx->recoverable || !ctx->bannable))
			return -EPERM;
		ctx->protected_content = p->value;
		return 0;
	default: /* NO_ZEROMAP, BAN_PERIOD, RINGSIZE, unknown */ return -EINVAL;
	}
}

struct gw_ctx_create {
	struct gw_file *fp;
	struct gw_ctx *ctx;
};

static int gw_ext_ctx_setparam(struct i915_user_extension __user *base, void *data)
{
	struct drm_i915_gem_context_create_ext_setparam ext;
	struct gw_ctx_create *cc = data;

	if (copy_from_user(&ext, base, sizeof(ext)))
		return -EFAULT;
	if (ext.param.ctx_id)
		return -EINVAL;
	return gw_setparam(cc->fp, cc->ctx, &ext.param);
}

static const gw_ext_fn gw_ctx_create_exts[] = {
	[I915_CONTEXT_CREATE_EXT_SETPARAM] = gw_ext_ctx_setparam,
	/* I915_CONTEXT_CREATE_EXT_CLONE: -EINVAL, as in i915 since 5.15 */
};

int gw_context_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_context_create_ext *args = data;
	struct gw_ctx_create cc = {.fp = to_gw_file(file)};
	u32 id;
	int err = 0;

	if (args->flags & I915_CONTEXT_CREATE_FLAGS_UNKNOWN)
		return -EINVAL;
	cc.ctx = gw_ctx_new(args->flags);
	if (!cc.ctx)
		return -ENOMEM;
	mutex_lock(&cc.fp->lock);
	if (args->flags & I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS)
		err = gw_user_extensions(args->extensions, gw_ctx_create_exts, ARRAY_SIZE(gw_ctx_create_exts), &cc);
	if (!err) /* lowest free id from 1 (0 is the default context) */
		err = xa_alloc(&cc.fp->contexts, &id, cc.ctx, xa_limit_32b, GFP_KERNEL);
	mutex_unlock(&cc.fp->lock);
	if (err) {
		gw_ctx_free(cc.ctx);
		return err;
	}
	args->ctx_id = id;
	return 0;
}

int gw_context_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_context_destroy *args = data;
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;

	if (args->pad)
		return -EINVAL;
	if (!args->ctx_id)
		return -ENOENT; /* the default context cannot be destroyed */
	mutex_lock(&fp->lock);
	ctx = xa_erase(&fp->contexts, args->ctx_id);
	mutex_unlock(&fp->lock);
	if (!ctx)
		return -ENOENT;
	gw_ctx_free(ctx);
	return 0;
}

static int gw_get_sseu(struct drm_i915_gem_context_param *p)
{
	struct drm_i915_gem_context_param_sseu sseu;

	if (p->size == 0)
		goto out; /* a size query */
	if (p->size < sizeof(sseu))
		return -EINVAL;
	if (copy_from_user(&sseu, u64_to_user_ptr(p->value), sizeof(sseu)))
		return -EFAULT;
	if (sseu.rsvd || (sseu.flags & ~I915_CONTEXT_SSEU_FLAG_ENGINE_INDEX))
		return -EINVAL;
	sseu.slice_mask = 0x1; /* the device's whole GT2, never reduced */
	sseu.subslice_mask = 0x7;
	sseu.min_eus_per_subslice = 8;
	sseu.max_eus_per_subslice = 8;
	if (copy_to_user(u64_to_user_ptr(p->value), &sseu, sizeof(sseu)))
		return -EFAULT;
out:
	p->size = sizeof(sseu);
	return 0;
}

int gw_context_getparam_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_context_param *p = data;
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;
	int err = 0;
	u32 id;

	mutex_lock(&fp->lock);
	ctx = gw_ctx_use(dev, fp, p->ctx_id);
	if (IS_ERR(ctx)) {
		err = PTR_ERR(ctx);
		goto out;
	}
	p->size = 0;
	switch (p->param) {
	case I915_CONTEXT_PARAM_GTT_SIZE: p->value = 1ull << 48; break;
	case I915_CONTEXT_PARAM_NO_ERROR_CAPTURE: p->value = ctx->no_error_capture; break;
	case I915_CONTEXT_PARAM_BANNABLE: p->value = ctx->bannable; break;
	case I915_CONTEXT_PARAM_RECOVERABLE: p->value = ctx->recoverable; break;
	case I915_CONTEXT_PARAM_PRIORITY: p->value = ctx->priority; break;
	case I915_CONTEXT_PARAM_PERSISTENCE: p->value = ctx->persistent; break;
	case I915_CONTEXT_PARAM_PROTECTED_CONTENT: p->value = ctx->protected_content; break;
	case I915_CONTEXT_PARAM_SSEU: err = gw_get_sseu(p); break;
	case I915_CONTEXT_PARAM_VM: /* a new id for the context's VM, every time */
		kref_get(&ctx->vm->ref);
		err = xa_alloc(&fp->vms, &id, ctx->vm, xa_limit_32b, GFP_KERNEL);
		if (err)
			gw_vm_put(ctx->vm);
		else
			p->value = id;
		break;
	default: /* ENGINES is not readable in i915 6.1; NO_ZEROMAP, ... */ err = -EINVAL;
	}
out:
	mutex_unlock(&fp->lock);
	return err;
}

int gw_context_setparam_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_context_param *p = data;
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;
	int err;

	mutex_lock(&fp->lock);
	ctx = xa_load(&fp->contexts, p->ctx_id); /* no finalization here */
	err = ctx ? gw_setparam(fp, ctx, p) : -ENOENT;
	mutex_unlock(&fp->lock);
	return err;
}

int gw_vm_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_vm_control *args = data;
	struct gw_file *fp = to_gw_file(file);
	struct gw_vm *vm;
	u32 id;
	int err;

	if (args->flags)
		return -EINVAL;
	vm = gw_vm_new(dev);
	if (!vm)
		return -ENOMEM;
	err = gw_user_extensions(args->extensions, NULL, 0, NULL); /* none defined */
	if (!err) {
		mutex_lock(&fp->lock);
		err = xa_alloc(&fp->vms, &id, vm, xa_limit_32b, GFP_KERNEL);
		mutex_unlock(&fp->lock);
	}
	if (err) {
		gw_vm_put(vm);
		return err;
	}
	args->vm_id = id;
	return 0;
}

int gw_vm_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_i915_gem_vm_control *args = data;
	struct gw_file *fp = to_gw_file(file);
	struct gw_vm *vm;

	if (args->flags || args->extensions)
		return -EINVAL;
	mutex_lock(&fp->lock);
	vm = xa_erase(&fp->vms, args->vm_id);
	mutex_unlock(&fp->lock);
	if (!vm)
		return -ENOENT;
	gw_vm_put(vm);
	return 0;
}

/* The engine the ring bits select exists in this context? fp->lock held */
static int gw_check_engine(const struct gw_ctx *ctx, u64 flags)
{
	unsigned int ring = flags & I915_EXEC_RING_MASK;

	if (ctx->num_engines >= 0)
		return ring < ctx->num_engines && ctx->engines[ring].engine_class != (u16)I915_ENGINE_CLASS_INVALID
			       ? 0
			       : -EINVAL;
	if (ring != I915_EXEC_BSD && (flags & I915_EXEC_BSD_MASK))
		return -EINVAL;
	return ring <= I915_EXEC_VEBOX ? 0 : -EINVAL; /* default, render, bsd, blt, vebox */
}

/* EXECBUFFER2: the context (finalized by this use) and its engine for the ring bits. */
int gw_ctx_select(struct drm_device *dev, struct drm_file *file, u32 id, u64 flags)
{
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;
	int err;

	mutex_lock(&fp->lock);
	ctx = gw_ctx_use(dev, fp, id);
	err = IS_ERR(ctx) ? PTR_ERR(ctx) : gw_check_engine(ctx, flags);
	mutex_unlock(&fp->lock);
	return err;
}

bool gw_ctx_exists(struct drm_file *file, u64 id)
{
	struct gw_file *fp = to_gw_file(file);
	bool found;

	if (upper_32_bits(id))
		return false;
	mutex_lock(&fp->lock);
	found = xa_load(&fp->contexts, id) != NULL;
	mutex_unlock(&fp->lock);
	return found;
}

void gw_ctx_describe(struct seq_file *m, struct drm_file *file)
{
	struct gw_file *fp = to_gw_file(file);
	struct gw_ctx *ctx;
	struct gw_vm *vm;
	unsigned long idx;
	int i;

	mutex_lock(&fp->lock);
	xa_for_each(&fp->contexts, idx, ctx)
	{
		seq_printf(m, "  ctx %lu %s vm %u prio %lld flags %s%s%s%s%s%s engines", idx,
			   ctx->finalized ? "final" : "proto", ctx->vm ? ctx->vm->serial : 0, ctx->priority,
			   ctx->bannable ? "b" : "-", ctx->recoverable ? "r" : "-", ctx->persistent ? "p" : "-",
			   ctx->no_error_capture ? "n" : "-", ctx->single_timeline ? "s" : "-",
			   ctx->protected_content ? "c" : "-");
		if (ctx->num_engines < 0)
			seq_puts(m, " default");
		for (i = 0; i < ctx->num_engines; i++)
			seq_printf(m, "%c%d:%d", i ? ',' : ' ', (s16)ctx->engines[i].engine_class,
				   (s16)ctx->engines[i].engine_instance);
		seq_putc(m, '\n');
	}
	xa_for_each(&fp->vms, idx, vm) seq_printf(m, "  vmid %lu vm %u\n", idx, vm->serial);
	mutex_unlock(&fp->lock);
}
