// The record view: every check of check_record(), and copying out of unaligned buffers.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "event_abi.hpp"

namespace
{

using gw::abi::RecordError;

std::vector<std::byte> bytes_of(const void *p, std::size_t n, std::size_t shift = 0)
{
	std::vector<std::byte> v(n + shift);
	std::memcpy(v.data() + shift, p, n);
	return v;
}

TEST(EventAbi, RecordSizeForEveryKind)
{
	EXPECT_EQ(gw::abi::record_size(GW_EV_FD), 80u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_IOCTL_EXT), 2696u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_IOCTL), 184u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_IOCTL_AFTER), 120u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_MREMAP), 64u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_EXIT), 24u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_CGROUP_MOVE), 40u);
	for (uint16_t k = GW_EV_FD; k < GW_EV_KIND_MAX; ++k)
		EXPECT_GE(gw::abi::record_size(k), sizeof(gw_hdr)) << "kind " << k;
	EXPECT_EQ(gw::abi::record_size(0), 0u);
	EXPECT_EQ(gw::abi::record_size(GW_EV_KIND_MAX), 0u);
}

TEST(EventAbi, MakeRecordFillsHeader)
{
	auto r = gw::abi::make_record<gw_ev_mmap>(42);
	EXPECT_EQ(r.hdr.kind, GW_EV_MMAP);
	EXPECT_EQ(r.hdr.size, 80);
	EXPECT_EQ(r.hdr.tgid, 42u);
	EXPECT_EQ(gw::abi::record_bytes(r).size(), 80u);
	EXPECT_EQ(gw::abi::check_record(gw::abi::record_bytes(r)), RecordError::none);
}

TEST(EventAbi, ReadsUnalignedRecord)
{
	auto r = gw::abi::make_record<gw_ev_close>(7);
	r.file = 0xffff888012345678;
	r.fd = 9;
	auto buf = bytes_of(&r, sizeof r, 3); // odd address
	auto got = gw::abi::read_record<gw_ev_close>(std::span(buf).subspan(3));
	ASSERT_TRUE(got);
	EXPECT_EQ(got->file, 0xffff888012345678u);
	EXPECT_EQ(got->fd, 9);
	EXPECT_EQ(got->hdr.tgid, 7u);
}

TEST(EventAbi, RejectsShortRecord)
{
	auto r = gw::abi::make_record<gw_ev_exit>(1);
	auto buf = bytes_of(&r, sizeof(gw_hdr) - 1);
	EXPECT_EQ(gw::abi::check_record(buf), RecordError::too_short);
	EXPECT_EQ(gw::abi::check_record({}), RecordError::too_short);
	EXPECT_FALSE(gw::abi::read_header(buf));
}

TEST(EventAbi, RejectsSizeFieldThatDisagreesWithSpan)
{
	auto r = gw::abi::make_record<gw_ev_close>(1);
	auto buf = bytes_of(&r, sizeof r);
	buf.push_back(std::byte{0});
	EXPECT_EQ(gw::abi::check_record(buf), RecordError::size_mismatch);
	r.hdr.size = 24;
	EXPECT_EQ(gw::abi::check_record(bytes_of(&r, sizeof r)), RecordError::size_mismatch);
}

TEST(EventAbi, RejectsBadKindAndWrongSize)
{
	auto r = gw::abi::make_record<gw_ev_close>(1);
	r.hdr.kind = 200;
	EXPECT_EQ(gw::abi::check_record(gw::abi::record_bytes(r)), RecordError::bad_kind);
	r.hdr.kind = 0;
	EXPECT_EQ(gw::abi::check_record(gw::abi::record_bytes(r)), RecordError::bad_kind);
	r.hdr.kind = GW_EV_FD; // a 40-byte record claiming to be a 72-byte kind
	EXPECT_EQ(gw::abi::check_record(gw::abi::record_bytes(r)), RecordError::wrong_size);
	EXPECT_STREQ(gw::abi::record_error_name(RecordError::wrong_size), "size does not match the record kind");
}

TEST(EventAbi, ReadRecordChecksKind)
{
	auto r = gw::abi::make_record<gw_ev_close>(1);
	EXPECT_TRUE(gw::abi::read_record<gw_ev_close>(gw::abi::record_bytes(r)));
	EXPECT_FALSE(gw::abi::read_record<gw_ev_close_range>(gw::abi::record_bytes(r))); // same size, other kind
}

// The fexit path's ioctl record reads as the tracepoint path's: its argument is in[] and out[],
// zero-padded past arg_size whatever the ring held there, with a GW_EV_IOCTL header.
TEST(EventAbi, ReadIoctlTakesTheFexitRecordAsAGwEvIoctl)
{
	auto a = gw::abi::make_record<gw_ev_ioctl_after>(7);
	a.hdr.tid = 8;
	a.hdr.hook = GW_HOOK_FEXIT;
	a.file = 0xffff888000001000;
	a.aux_file = 0xffff888000002000;
	a.cmd = 0xc02064b2;
	a.fd = 5;
	a.arg_size = 32;
	a.drv = 3;
	a.ret = 0;
	for (unsigned i = 0; i < sizeof a.in; ++i)
		a.in[i] = static_cast<uint8_t>(i < 32 ? i + 1 : 0xa5); // 0xa5: what the ring held
	auto buf = bytes_of(&a, sizeof a, 5);
	auto io = gw::abi::read_ioctl(std::span(buf).subspan(5));
	ASSERT_TRUE(io);
	EXPECT_EQ(io->hdr.kind, GW_EV_IOCTL);
	EXPECT_EQ(io->hdr.size, sizeof(gw_ev_ioctl));
	EXPECT_EQ(io->hdr.hook, GW_HOOK_FEXIT);
	EXPECT_EQ(io->hdr.tgid, 7u);
	EXPECT_EQ(io->hdr.tid, 8u);
	EXPECT_EQ(io->file, a.file);
	EXPECT_EQ(io->aux_file, a.aux_file);
	EXPECT_EQ(io->cmd, a.cmd);
	EXPECT_EQ(io->fd, 5);
	EXPECT_EQ(io->arg_size, 32);
	EXPECT_EQ(io->drv, 3);
	for (unsigned i = 0; i < GW_IOCTL_ARG_MAX; ++i) {
		uint8_t want = i < 32 ? static_cast<uint8_t>(i + 1) : 0;
		EXPECT_EQ(io->in[i], want) << "in[" << i << "]";
		EXPECT_EQ(io->out[i], want) << "out[" << i << "]";
	}
}

TEST(EventAbi, ReadIoctlTakesTheTracepointRecordAsItIsAndNothingElse)
{
	auto r = gw::abi::make_record<gw_ev_ioctl>(7);
	r.arg_size = 8;
	r.in[0] = 1;
	r.out[0] = 2;
	auto io = gw::abi::read_ioctl(gw::abi::record_bytes(r));
	ASSERT_TRUE(io);
	EXPECT_EQ(io->in[0], 1);
	EXPECT_EQ(io->out[0], 2);
	EXPECT_FALSE(gw::abi::read_ioctl(gw::abi::record_bytes(gw::abi::make_record<gw_ev_close>(7))));
	auto a = gw::abi::make_record<gw_ev_ioctl_after>(7);
	auto buf = bytes_of(&a, sizeof a);
	buf.pop_back(); // one byte short of its size
	EXPECT_FALSE(gw::abi::read_ioctl(buf));
	a.arg_size = GW_IOCTL_ARG_MAX + 1; // kept, for the decoder to refuse
	auto big = gw::abi::read_ioctl(gw::abi::record_bytes(a));
	ASSERT_TRUE(big);
	EXPECT_EQ(big->arg_size, GW_IOCTL_ARG_MAX + 1);
}

} // namespace

/* the ring's wakeup policy asks for the bytes waiting on one record per step written: records
 * of any sizes, from any start, laid end to end as the kernel lays them (an 8-byte header
 * each, 8-byte rounded) */
TEST(RingStep, OneRecordPerStepWritten)
{
	const uint32_t ioctl_rec = sizeof(struct gw_ev_ioctl), ext_rec = sizeof(struct gw_ev_ioctl_ext);
	const uint64_t longest = ext_rec + GW_RINGBUF_HDR_SZ;
	std::mt19937 rng(17);
	for (uint64_t step : {1024u, 2048u, 4096u}) {
		for (int run = 0; run < 20; run++) {
			uint64_t pos = rng() % (4 * step) & ~7ull; /* the next record's header */
			uint64_t shift = rng();                    /* a global's address: any constant */
			uint64_t first = pos, last_query = pos, crossed = 0;
			for (int i = 0; i < 5000; i++) {
				/* the ioctl record, small ones, and now and then an extension record */
				uint32_t sizes[] = {ioctl_rec, 40,      48,
						    64,        ext_rec, static_cast<uint32_t>(24 + rng() % 200)};
				uint32_t size = sizes[rng() % 6];
				uint64_t data = pos + GW_RINGBUF_HDR_SZ;
				uint64_t end = pos + ((size + 7) & ~7u) + GW_RINGBUF_HDR_SZ;
				bool c = gw_ring_step_crossed_at(data - shift, size, step) != 0;
				/* relative to the shifted stream: a multiple of step within (start, end] */
				uint64_t s0 = pos - shift, e0 = end - shift;
				EXPECT_EQ(c, e0 / step != s0 / step || (e0 - s0) >= step)
					<< "step " << step << " record at " << pos << " size " << size;
				if (c) {
					/* between two queries at most a step and the longest record are written */
					EXPECT_LE(end - last_query, step + longest);
					last_query = end;
					crossed++;
				}
				pos = end;
			}
			/* records shorter than the step: one query per step written, give or take the ends */
			if (step > longest) {
				uint64_t steps = (pos - first) / step;
				EXPECT_GE(crossed + 1, steps);
				EXPECT_LE(crossed, steps + 1);
			}
		}
	}
}
