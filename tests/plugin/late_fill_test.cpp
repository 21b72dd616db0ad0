// restore/plugin/late_fill.cpp: which buffers a restored task leaves unfilled until
// RESUME_DEVICES_LATE, read from real images in a scratch image directory. The late fill
// itself (from CRIU's process, through the task's fd) needs a DRM device and a CRIU restore:
// the VM scenarios run it (criu_roundtrip, criu_scratch_corrupt).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "drm_devices.hpp"
#include "image_dir_fixture.hpp"
#include "image_test_util.hpp"
#include "object_image.hpp"
#include "restore.hpp"

using gwcriu::FileImage;
using gwcriu::HandleRec;
using gwcriu::VmaRec;

namespace
{

constexpr uint64_t kSize = 16384; // a 64 x 64 dumb buffer of 32 bpp

class LateFill : public ImageDir
{
protected:
	const uint32_t me = static_cast<uint32_t>(getpid());

	void TearDown() override
	{
		unsetenv("GPUWATCH_LATE_FILL");
		ImageDir::TearDown();
	}
	void write(const std::string &name, const std::string &text) { std::ofstream(path(name.c_str())) << text; }
	// handle h of buffer `object`, its contents saved (an image of this version) or not
	HandleRec handle(uint32_t h, uint64_t object, bool saved)
	{
		if (saved) {
			std::string c(kSize, static_cast<char>(object));
			write(gwcriu::object_image_name(object),
			      c + gwcriu::object_trailer(kSize, gwcriu::xxh64(c.data(), kSize)));
		}
		return {h, kSize, "dumb", object, saved, {{"width", 64}, {"height", 64}, {"bpp", 32}, {"flags", 0}}};
	}
	FileImage file(uint32_t id)
	{
		FileImage f;
		f.criu_id = id;
		f.device = vgem_card0();
		f.f_flags = 02;
		f.source = "manifest";
		f.handles_known = true;
		f.holders.push_back({me, me, {static_cast<int>(2 + id)}});
		return f;
	}
	// a mapping by task vpid of handle h of file `id` (buffer `object`), from byte `delta` of it
	VmaRec vma(uint32_t vpid, uint32_t id, uint32_t h, uint64_t object, uint64_t delta, bool saved)
	{
		static uint64_t next = 0x7f0000000000;
		VmaRec v;
		v.pid = v.vpid = vpid;
		v.start = next;
		next += 1 << 20;
		v.length = kSize - delta;
		v.offset = 0x100000000 + delta;
		v.prot = "rw";
		v.file = id;
		v.device = vgem_card0();
		v.handle = h;
		v.object = object;
		v.object_size = kSize;
		v.delta = delta;
		v.saved = saved;
		return v;
	}
	void save(const std::vector<FileImage> &files, const std::vector<VmaRec> &vmas)
	{
		test_devices().clear();
		for (const FileImage &f : files)
			write(gwcriu::file_image_name(f.criu_id), gwcriu::to_json(f, test_index()).dump());
		write(gwcriu::kVmasImage, gwcriu::to_json(vmas, test_index()).dump());
		write(gw::kDevicesImage, gw::devices_image_json(test_devices()).dump());
	}
	bool late(uint32_t file, uint32_t h)
	{
		const FileImage &f = gwcriu::restore_images().files.at(file);
		for (const HandleRec &r : f.handles)
			if (r.handle == h)
				return gwcriu::may_fill_late(f, r);
		ADD_FAILURE() << "no handle " << h << " in file " << file;
		return false;
	}
};

} // namespace

// Only a buffer whose contents were saved and that this task maps whole through the same file
// is left for RESUME_DEVICES_LATE: there the task's mapping holds its pages while it is filled
TEST_F(LateFill, OnlyABufferThisTaskMapsWholeThroughItsFile)
{
	FileImage a = file(1);
	a.handles = {handle(1, 1, true), handle(2, 2, true), handle(3, 3, true), handle(4, 4, true),
		     handle(5, 5, false)};
	// b shows its buffer in a framebuffer, which RESTORE_EXT_FILE sets again: contents first
	FileImage b = file(2);
	b.handles = {handle(1, 6, true)};
	b.kms.framebuffers.push_back(legacy_framebuffer(40, 1));
	// c: the same buffer as a.1 through a second file, mapped through a
	FileImage c = file(3);
	c.handles = {handle(1, 1, true)};
	save({a, b, c}, {vma(me, 1, 1, 1, 0, true), vma(me, 1, 2, 2, 4096, true), vma(me + 1, 1, 4, 4, 0, true),
			 vma(me, 1, 5, 5, 0, false), vma(me, 2, 1, 6, 0, true)});
	ASSERT_EQ(gwcriu::load_restore_images(), 0);
	EXPECT_TRUE(late(1, 1)) << "mapped whole by this task";
	EXPECT_FALSE(late(1, 2)) << "a window: the restorer may map it through a copy";
	EXPECT_FALSE(late(1, 3)) << "not mapped";
	EXPECT_FALSE(late(1, 4)) << "mapped by another task";
	EXPECT_FALSE(late(1, 5)) << "contents not saved";
	EXPECT_FALSE(late(2, 1)) << "shown in a framebuffer";
	EXPECT_FALSE(late(3, 1)) << "mapped through another file";

	// one left for later and never filled: the end of the restore names it
	EXPECT_TRUE(gwcriu::unfilled_late().empty());
	const FileImage &restored = gwcriu::restore_images().files.at(1);
	gwcriu::note_late_fill(restored, restored.handles.front());
	EXPECT_EQ(gwcriu::unfilled_late(), std::vector<std::string>{"handle 1 of file 1 (buffer 1)"});

	setenv("GPUWATCH_LATE_FILL", "0", 1);
	ASSERT_EQ(gwcriu::load_restore_images(), 0);
	EXPECT_FALSE(late(1, 1)) << "GPUWATCH_LATE_FILL=0";
}
