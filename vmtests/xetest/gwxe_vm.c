// SPDX-License-Identifier: GPL-2.0
/*
 * gwxe per-file state: VMs with their VM_BIND bookkeeping and exec queues, numbered and
 * checked as xe does in Linux 6.8 (xe_vm.c, xe_exec_queue.c): ids from xarrays allocated
 * with XA_FLAGS_ALLOC1 (lowest free from 1), one table per file. A binding records
 * (addr, range, object or user address, offset, PAT index, flags); nothing is ever mapped
 * on a GPU. MAP over existing bindings and UNMAP of part of one split them, as drm_gpuvm does.
 */
#include <linux/capability.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "gwxe.h"

/* xelp_pat_table coherency: 0 = WB is at least 1-way coherent, WC/WT/UC are not. */
static bool gwxe_pat_coherent(u16 pat_index)
{
	return pat_index == 0;
}

int gwxe_file_open(struct drm_device *dev, struct drm_file *file)
{
	struct gwxe_file *fp = kzalloc(sizeof(*fp), GFP_KERNEL);

	if (!fp)
		return -ENOMEM;
	mutex_init(&fp->lock);
	xa_init_flags(&fp->vms, XA_FLAGS_ALLOC1);
	xa_init_flags(&fp->queues, XA_FLAGS_ALLOC1);
	fp->client_id = atomic_inc_return(&to_gwxe(dev)->next_client_id) - 1;
	fp->opener = get_pid(task_pid(current));
	file->driver_priv = fp;
	return 0;
}

static void gwxe_binding_free(struct gwxe_binding *b)
{
	list_del(&b->link);
	if (b->obj)
		drm_gem_object_put(b->obj);
	kfree(b);
}

static void gwxe_vm_release(struct kref *ref)
{
	struct gwxe_vm *vm = container_of(ref, struct gwxe_vm, ref);
	struct gwxe_binding *b, *n;

	list_for_each_entry_safe(b, n, &vm->bindings, link) gwxe_binding_free(b);
	kfree(vm);
}

void gwxe_vm_put(struct gwxe_vm *vm)
{
	if (vm)
		kref_put(&vm->ref, gwxe_vm_release);
}

/* xe_vm_close_and_put(): the id is gone; bindings go now (they may hold private objects
 * that hold the VM); exec queues and private objects keep the struct. */
static void gwxe_vm_close_and_put(struct gwxe_vm *vm)
{
	struct gwxe_binding *b, *n;

	vm->closed = true;
	list_for_each_entry_safe(b, n, &vm->bindings, link) gwxe_binding_free(b);
	gwxe_vm_put(vm);
}

static void gwxe_queue_free(struct gwxe_queue *q)
{
	if (q->vm && (q->vm->flags & GW_XE_VM_CREATE_FLAG_LR_MODE))
		q->vm->num_lr_queues--;
	gwxe_vm_put(q->vm);
	kfree(q->instances);
	kfree(q);
}

void gwxe_file_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_queue *q;
	struct gwxe_vm *vm;
	unsigned long id;

	xa_for_each(&fp->queues, id, q) gwxe_queue_free(q);
	xa_destroy(&fp->queues);
	xa_for_each(&fp->vms, id, vm) gwxe_vm_close_and_put(vm);
	xa_destroy(&fp->vms);
	mutex_destroy(&fp->lock);
	put_pid(fp->opener);
	kfree(fp);
}

struct gwxe_vm *gwxe_vm_lookup(struct drm_file *file, u32 id)
{
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_vm *vm;

	mutex_lock(&fp->lock);
	vm = xa_load(&fp->vms, id);
	if (vm)
		kref_get(&vm->ref);
	mutex_unlock(&fp->lock);
	return vm;
}

#define GWXE_VM_CREATE_FLAGS                                                                                           \
	(GW_XE_VM_CREATE_FLAG_SCRATCH_PAGE | GW_XE_VM_CREATE_FLAG_LR_MODE | GW_XE_VM_CREATE_FLAG_FAULT_MODE)

int gwxe_vm_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_vm_create *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_vm *vm;
	u32 id;
	int err;

	if (args->extensions) /* 6.8 knows no VM_CREATE extension */
		return -EINVAL;
	if (args->flags & GW_XE_VM_CREATE_FLAG_FAULT_MODE)
		return -EINVAL; /* no USM (recoverable page faults) on this part, as DG2 */
	if (args->reserved[0] || args->reserved[1] || (args->flags & ~GWXE_VM_CREATE_FLAGS))
		return -EINVAL;
	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	if (!vm)
		return -ENOMEM;
	kref_init(&vm->ref);
	INIT_LIST_HEAD(&vm->bindings);
	vm->flags = args->flags;
	mutex_lock(&fp->lock);
	err = xa_alloc(&fp->vms, &id, vm, xa_limit_32b, GFP_KERNEL);
	if (!err)
		vm->id = id;
	mutex_unlock(&fp->lock);
	if (err) {
		kfree(vm);
		return err;
	}
	args->vm_id = id;
	return 0;
}

int gwxe_vm_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_vm_destroy *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_vm *vm;
	int err = 0;

	if (args->pad || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	mutex_lock(&fp->lock);
	vm = xa_load(&fp->vms, args->vm_id);
	if (!vm)
		err = -ENOENT;
	else if (vm->num_lr_queues)
		err = -EBUSY; /* xe: vm->preempt.num_exec_queues */
	else
		xa_erase(&fp->vms, args->vm_id);
	if (!err)
		gwxe_vm_close_and_put(vm);
	mutex_unlock(&fp->lock);
	return err;
}

/* Removes [addr, addr + range) from a VM's bindings, keeping the pieces outside it. */
static int gwxe_unbind_range(struct gwxe_vm *vm, u64 addr, u64 range)
{
	struct gwxe_binding *b, *n;
	u64 end = addr + range;

	list_for_each_entry_safe(b, n, &vm->bindings, link)
	{
		u64 bend = b->addr + b->range;

		if (bend <= addr || b->addr >= end)
			continue;
		if (b->addr < addr && bend > end) { /* a hole in its middle: split in two */
			struct gwxe_binding *r = kmemdup(b, sizeof(*b), GFP_KERNEL);

			if (!r)
				return -ENOMEM;
			if (r->obj)
				drm_gem_object_get(r->obj);
			r->addr = end;
			r->range = bend - end;
			r->offset += end - b->addr; /* object offset or user address alike */
			list_add(&r->link, &b->link);
			b->range = addr - b->addr;
		} else if (b->addr < addr) { /* keep the head */
			b->range = addr - b->addr;
		} else if (bend > end) { /* keep the tail */
			b->offset += end - b->addr;
			b->range = bend - end;
			b->addr = end;
		} else {
			gwxe_binding_free(b);
		}
	}
	return 0;
}

static void gwxe_insert_binding(struct gwxe_vm *vm, struct gwxe_binding *nb)
{
	struct gwxe_binding *b;

	list_for_each_entry(b, &vm->bindings, link) if (b->addr > nb->addr)
	{
		list_add_tail(&nb->link, &b->link);
		return;
	}
	list_add_tail(&nb->link, &vm->bindings);
}

#define GWXE_BIND_FLAGS                                                                                                \
	(GW_XE_VM_BIND_FLAG_READONLY | GW_XE_VM_BIND_FLAG_IMMEDIATE | GW_XE_VM_BIND_FLAG_NULL |                        \
	 GW_XE_VM_BIND_FLAG_DUMPABLE)

/* vm_bind_ioctl_check_args(), per op */
static int gwxe_check_bind_op(const struct gw_xe_vm_bind_op *o)
{
	bool is_null = o->flags & GW_XE_VM_BIND_FLAG_NULL;
	u32 op = o->op;

	if (o->extensions || o->pad || o->pad2 || o->reserved[0] || o->reserved[1] || o->reserved[2])
		return -EINVAL;
	if (o->pat_index >= GWXE_PAT_ENTRIES)
		return -EINVAL;
	if (op > GW_XE_VM_BIND_OP_PREFETCH || (o->flags & ~GWXE_BIND_FLAGS) || (o->obj && is_null) ||
	    (o->obj_offset && is_null) || (op != GW_XE_VM_BIND_OP_MAP && is_null) ||
	    (!o->obj && op == GW_XE_VM_BIND_OP_MAP && !is_null) || (!o->obj && op == GW_XE_VM_BIND_OP_UNMAP_ALL) ||
	    (o->addr && op == GW_XE_VM_BIND_OP_UNMAP_ALL) || (o->range && op == GW_XE_VM_BIND_OP_UNMAP_ALL) ||
	    (o->obj && op == GW_XE_VM_BIND_OP_MAP_USERPTR) ||
	    (!gwxe_pat_coherent(o->pat_index) && op == GW_XE_VM_BIND_OP_MAP_USERPTR) ||
	    (o->obj && op == GW_XE_VM_BIND_OP_PREFETCH) ||
	    (o->prefetch_mem_region_instance && op != GW_XE_VM_BIND_OP_PREFETCH) ||
	    !(BIT(o->prefetch_mem_region_instance & 31) & GWXE_MEM_REGION_MASK) ||
	    o->prefetch_mem_region_instance > 31 || (o->obj && op == GW_XE_VM_BIND_OP_UNMAP))
		return -EINVAL;
	if ((o->obj_offset & ~PAGE_MASK) || (o->addr & ~PAGE_MASK) || (o->range & ~PAGE_MASK) ||
	    (!o->range && op != GW_XE_VM_BIND_OP_UNMAP_ALL))
		return -EINVAL;
	if (o->range > (1ull << GWXE_VA_BITS) || o->addr > (1ull << GWXE_VA_BITS) - o->range)
		return -EINVAL;
	return 0;
}

/* Syncs of a bind: binary syncobjs (waits need a fence; signals get a signalled one) and
 * user fences (written at once: nothing is ever in flight). */
static int gwxe_syncs(struct drm_file *file, u64 uptr, u32 num, bool apply)
{
	struct gw_xe_sync __user *usync = u64_to_user_ptr(uptr);
	u32 i;

	if (num > GW_XE_MAX_SYNCS)
		return -EINVAL;
	for (i = 0; i < num; i++) {
		struct gw_xe_sync s;
		bool signal;

		if (copy_from_user(&s, &usync[i], sizeof(s)))
			return -EFAULT;
		signal = s.flags & GW_XE_SYNC_FLAG_SIGNAL;
		if (s.extensions || s.reserved[0] || s.reserved[1] || (s.flags & ~GW_XE_SYNC_FLAG_SIGNAL))
			return -EINVAL;
		switch (s.type) {
		case GW_XE_SYNC_TYPE_SYNCOBJ: {
			struct drm_syncobj *so;
			struct dma_fence *f;

			if (s.timeline_value)
				return -EINVAL;
			so = drm_syncobj_find(file, s.handle);
			if (!so)
				return -ENOENT;
			if (!signal) {
				f = drm_syncobj_fence_get(so);
				dma_fence_put(f);
				if (!f) {
					drm_syncobj_put(so);
					return -EINVAL;
				}
			} else if (apply) {
				f = dma_fence_get_stub();
				drm_syncobj_replace_fence(so, f);
				dma_fence_put(f);
			}
			drm_syncobj_put(so);
			break;
		}
		case GW_XE_SYNC_TYPE_USER_FENCE:
			if (!signal || (s.addr & 7))
				return -EINVAL;
			if (apply && put_user(s.timeline_value, (u64 __user *)u64_to_user_ptr(s.addr)))
				return -EFAULT;
			break;
		default: /* timeline syncobjs: not in the fixture */ return -EOPNOTSUPP;
		}
	}
	return 0;
}

int gwxe_vm_bind_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_vm_bind *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gw_xe_vm_bind_op *ops;
	struct drm_gem_object **objs;
	struct gwxe_vm *vm = NULL;
	u32 i, n = args->num_binds;
	int err;

	if (args->pad || args->pad2 || args->reserved[0] || args->reserved[1] || args->extensions)
		return -EINVAL;
	if (!n || n > SZ_64K)
		return -EINVAL;
	ops = kvmalloc_array(n, sizeof(*ops), GFP_KERNEL);
	objs = kvcalloc(n, sizeof(*objs), GFP_KERNEL);
	if (!ops || !objs) {
		err = -ENOMEM;
		goto out;
	}
	if (n == 1)
		ops[0] = args->bind;
	else if (copy_from_user(ops, u64_to_user_ptr(args->vector_of_binds), n * sizeof(*ops))) {
		err = -EFAULT;
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = gwxe_check_bind_op(&ops[i]);
		if (err)
			goto out;
	}
	mutex_lock(&fp->lock);
	if (args->exec_queue_id) {
		struct gwxe_queue *q = xa_load(&fp->queues, args->exec_queue_id);

		err = !q ? -ENOENT : q->instances[0].engine_class != GW_XE_ENGINE_CLASS_VM_BIND ? -EINVAL : 0;
		if (err)
			goto unlock;
	}
	vm = xa_load(&fp->vms, args->vm_id);
	if (!vm) {
		err = -EINVAL; /* as xe_vm_bind_ioctl() for an unknown VM */
		goto unlock;
	}
	for (i = 0; i < n; i++) {
		struct gwxe_bo *bo;

		if (!ops[i].obj)
			continue;
		objs[i] = drm_gem_object_lookup(file, ops[i].obj);
		if (!objs[i]) {
			err = -ENOENT;
			goto unlock;
		}
		if (ops[i].op != GW_XE_VM_BIND_OP_MAP)
			continue;
		bo = to_gwxe_bo(objs[i]);
		if (ops[i].range > objs[i]->size || ops[i].obj_offset > objs[i]->size - ops[i].range ||
		    (bo->vm && bo->vm != vm) ||
		    (!gwxe_pat_coherent(ops[i].pat_index) && bo->cpu_caching == GW_XE_GEM_CPU_CACHING_WB)) {
			err = -EINVAL;
			goto unlock;
		}
	}
	err = gwxe_syncs(file, args->syncs, args->num_syncs, false);
	if (err)
		goto unlock;
	for (i = 0; i < n && !err; i++) {
		const struct gw_xe_vm_bind_op *o = &ops[i];
		struct gwxe_binding *b, *nb;

		switch (o->op) {
		case GW_XE_VM_BIND_OP_MAP:
		case GW_XE_VM_BIND_OP_MAP_USERPTR:
			nb = kzalloc(sizeof(*nb), GFP_KERNEL);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			err = gwxe_unbind_range(vm, o->addr, o->range);
			if (err) {
				kfree(nb);
				break;
			}
			nb->addr = o->addr;
			nb->range = o->range;
			nb->userptr = o->op == GW_XE_VM_BIND_OP_MAP_USERPTR;
			nb->offset = o->obj_offset; /* the user address for userptr */
			nb->pat_index = o->pat_index;
			nb->flags = o->flags;
			nb->obj = objs[i]; /* takes the lookup's reference */
			objs[i] = NULL;
			gwxe_insert_binding(vm, nb);
			break;
		case GW_XE_VM_BIND_OP_UNMAP: err = gwxe_unbind_range(vm, o->addr, o->range); break;
		case GW_XE_VM_BIND_OP_UNMAP_ALL: {
			struct gwxe_binding *t;

			list_for_each_entry_safe(b, t, &vm->bindings, link) if (b->obj == objs[i]) gwxe_binding_free(b);
			break;
		}
		default: /* PREFETCH moves nothing here */ break;
		}
	}
	if (!err)
		err = gwxe_syncs(file, args->syncs, args->num_syncs, true);
unlock:
	mutex_unlock(&fp->lock);
out:
	if (objs)
		for (i = 0; i < n; i++)
			if (objs[i])
				drm_gem_object_put(objs[i]);
	kvfree(objs);
	kvfree(ops);
	return err;
}

/* calc_validate_logical_mask(): every instance exists, one class, one GT; the instances of
 * a parallel queue are logically contiguous from one slot to the next. */
static bool gwxe_valid_placements(const struct gw_xe_engine_class_instance *eci, u16 width, u16 num)
{
	u32 prev = 0, i, j;

	for (i = 0; i < width; i++) {
		u32 cur = 0;

		for (j = 0; j < num; j++) {
			u32 k = j * width + i;

			if (!gwxe_engine_exists(&eci[k]))
				return false;
			if (k && (eci[k].gt_id != eci[0].gt_id || eci[k].engine_class != eci[0].engine_class))
				return false;
			cur |= BIT(eci[k].engine_instance);
		}
		if (i && cur != prev << 1)
			return false;
		prev = cur;
	}
	return true;
}

static u32 gwxe_max_priority(void)
{
	return capable(CAP_SYS_NICE) ? GWXE_PRIORITY_HIGH : GWXE_PRIORITY_NORMAL;
}

/* exec_queue_user_extensions(): at most 16 SET_PROPERTY links. */
static int gwxe_queue_extensions(struct gwxe_queue *q, u64 chain)
{
	int n;

	for (n = 0; chain; n++) {
		struct gw_xe_ext_set_property ext;

		if (n >= 16)
			return -E2BIG;
		if (copy_from_user(&ext, u64_to_user_ptr(chain), sizeof(ext)))
			return -EFAULT;
		if (ext.base.pad || ext.base.name != GW_XE_EXEC_QUEUE_EXTENSION_SET_PROPERTY)
			return -EINVAL;
		if (ext.pad || ext.reserved[0] || ext.reserved[1])
			return -EINVAL;
		switch (ext.property) {
		case GW_XE_EXEC_QUEUE_SET_PROPERTY_PRIORITY:
			if (ext.value > GWXE_PRIORITY_HIGH)
				return -EINVAL;
			if (ext.value > gwxe_max_priority())
				return -EPERM;
			q->priority = ext.value;
			break;
		case GW_XE_EXEC_QUEUE_SET_PROPERTY_TIMESLICE:
			if (ext.value < GWXE_TIMESLICE_MIN || ext.value > GWXE_TIMESLICE_MAX)
				return -EINVAL;
			q->timeslice_us = ext.value;
			break;
		default: /* 6.8 has these two only */ return -EINVAL;
		}
		chain = ext.base.next_extension;
	}
	return 0;
}

int gwxe_exec_queue_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_exec_queue_create *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	u32 len = (u32)args->width * args->num_placements, id;
	struct gwxe_queue *q;
	int err;

	if (args->flags || args->reserved[0] || args->reserved[1])
		return -EINVAL; /* 6.8: flags MBZ */
	if (!len || len > GWXE_MAX_INSTANCES)
		return -EINVAL;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	q->instances = kcalloc(len, sizeof(*q->instances), GFP_KERNEL);
	if (!q->instances) {
		kfree(q);
		return -ENOMEM;
	}
	if (copy_from_user(q->instances, u64_to_user_ptr(args->instances), len * sizeof(*q->instances))) {
		err = -EFAULT;
		goto fail;
	}
	q->width = args->width;
	q->num_placements = args->num_placements;
	q->vm_id = args->vm_id;
	q->priority = GWXE_PRIORITY_NORMAL;
	q->timeslice_us = GWXE_TIMESLICE_DEFAULT;
	err = -EINVAL;
	if (q->instances[0].gt_id != 0)
		goto fail;
	if (q->instances[0].engine_class == GW_XE_ENGINE_CLASS_VM_BIND) {
		/* 6.8: one bind queue per tile, no VM taken */
		if (args->width != 1 || args->num_placements != 1 || q->instances[0].engine_instance != 0)
			goto fail;
	} else {
		if (!gwxe_valid_placements(q->instances, args->width, args->num_placements))
			goto fail;
		q->vm = gwxe_vm_lookup(file, args->vm_id);
		if (!q->vm) {
			err = -ENOENT;
			goto fail;
		}
	}
	err = gwxe_queue_extensions(q, args->extensions);
	if (err)
		goto fail;
	mutex_lock(&fp->lock);
	err = xa_alloc(&fp->queues, &id, q, xa_limit_32b, GFP_KERNEL);
	if (!err) {
		q->id = id;
		if (q->vm && (q->vm->flags & GW_XE_VM_CREATE_FLAG_LR_MODE))
			q->vm->num_lr_queues++;
	}
	mutex_unlock(&fp->lock);
	if (err)
		goto fail;
	args->exec_queue_id = id;
	return 0;
fail:
	gwxe_vm_put(q->vm);
	kfree(q->instances);
	kfree(q);
	return err;
}

int gwxe_exec_queue_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_exec_queue_destroy *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_queue *q;

	if (args->pad || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	mutex_lock(&fp->lock);
	q = xa_erase(&fp->queues, args->exec_queue_id);
	if (q)
		gwxe_queue_free(q);
	mutex_unlock(&fp->lock);
	return q ? 0 : -ENOENT;
}

int gwxe_exec_queue_get_property_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct gw_xe_exec_queue_get_property *args = data;
	struct gwxe_file *fp = to_gwxe_file(file);
	int err = 0;

	if (args->extensions || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	mutex_lock(&fp->lock);
	if (!xa_load(&fp->queues, args->exec_queue_id))
		err = -ENOENT;
	else if (args->property != GW_XE_EXEC_QUEUE_GET_PROPERTY_BAN)
		err = -EINVAL;
	else
		args->value = 0; /* never banned: nothing runs */
	mutex_unlock(&fp->lock);
	return err;
}

/* The file's lowest handle naming obj, or 0. */
static u32 gwxe_handle_of(struct drm_file *file, struct drm_gem_object *obj)
{
	struct drm_gem_object *o;
	int id, found = 0;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, o, id) if (o == obj)
	{
		found = id;
		break;
	}
	spin_unlock(&file->table_lock);
	return found;
}

void gwxe_vm_describe(struct seq_file *m, struct drm_file *file)
{
	struct gwxe_file *fp = to_gwxe_file(file);
	struct gwxe_binding *b;
	struct gwxe_queue *q;
	struct gwxe_vm *vm;
	unsigned long id;
	u32 k;

	mutex_lock(&fp->lock);
	xa_for_each(&fp->vms, id, vm)
	{
		seq_printf(m, "  vm %lu flags 0x%x\n", id, vm->flags);
		list_for_each_entry(b, &vm->bindings, link)
		{
			seq_printf(m, "    bind 0x%llx+0x%llx ", b->addr, b->range);
			if (b->userptr)
				seq_printf(m, "userptr 0x%llx", b->offset);
			else if (!b->obj)
				seq_puts(m, "null");
			else
				seq_printf(m, "handle %u offset 0x%llx", gwxe_handle_of(file, b->obj), b->offset);
			seq_printf(m, " pat %u flags 0x%x\n", b->pat_index, b->flags);
		}
	}
	xa_for_each(&fp->queues, id, q)
	{
		seq_printf(m, "  queue %lu vm %u width %u placements %u instances ", id, q->vm_id, q->width,
			   q->num_placements);
		for (k = 0; k < (u32)q->width * q->num_placements; k++)
			seq_printf(m, "%s%u:%u:%u", k ? "," : "", q->instances[k].engine_class,
				   q->instances[k].engine_instance, q->instances[k].gt_id);
		seq_printf(m, " priority %u timeslice %u\n", q->priority, q->timeslice_us);
	}
	mutex_unlock(&fp->lock);
}
