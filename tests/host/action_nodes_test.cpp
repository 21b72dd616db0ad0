// Host tests (root) of the action helper's node creation inside another process's root: a
// child chrooted into a temp directory stands in for a restored container.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nodes.hpp"
#include "sysutil.hpp"

namespace fs = std::filesystem;

namespace
{

class ChrootedChild : public ::testing::Test
{
protected:
	void SetUp() override
	{
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root (chroot, mknod)";
		char d[] = "/tmp/gw-root.XXXXXX";
		root_ = mkdtemp(d);
		fs::create_directories(root_ / "dev");
		int p[2];
		ASSERT_EQ(pipe(p), 0);
		child_ = fork();
		if (child_ == 0) {
			if (chroot(root_.c_str()) != 0)
				_exit(1);
			(void)!write(p[1], "x", 1);
			pause();
			_exit(0);
		}
		char c;
		ASSERT_EQ(read(p[0], &c, 1), 1) << "child could not chroot";
		close(p[0]);
		close(p[1]);
	}
	void TearDown() override
	{
		if (child_ > 0) {
			kill(child_, SIGKILL);
			waitpid(child_, nullptr, 0);
		}
		if (!root_.empty())
			fs::remove_all(root_);
	}
	gw::SavedDevice node(const char *path, uint32_t major = 226, uint32_t minor = 0)
	{
		gw::SavedDevice n;
		n.path = path;
		n.major = major;
		n.minor = minor;
		n.mode = 0660;
		n.uid = 0;
		n.gid = 44;
		return n;
	}
	fs::path root_;
	pid_t child_ = -1;
};

TEST_F(ChrootedChild, CreatesTheNodeWithModeOwnerAndChosenMinor)
{
	ASSERT_TRUE(gw::action::create_node_in_root(child_, node("/dev/dri/card0"), 1));
	struct stat st {
	};
	ASSERT_EQ(lstat((root_ / "dev/dri/card0").c_str(), &st), 0);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(major(st.st_rdev), 226u);
	EXPECT_EQ(minor(st.st_rdev), 1u);
	EXPECT_EQ(st.st_mode & 07777, 0660u);
	EXPECT_EQ(st.st_gid, 44u);
	/* an existing node is left alone */
	EXPECT_FALSE(gw::action::create_node_in_root(child_, node("/dev/dri/card0"), 0));
}

// Issue 16, finding 3: post-restore's mknod ran in criu's cgroup, where the container's device
// policy (its cgroup's BPF_CGROUP_DEVICE program) does not apply. It now runs in a child that
// joined the task's cgroup: the CPU time it spent is charged there (cpu.stat's usage_usec of a
// cgroup that holds only the paused "container"). The policy itself: VM scenario
// criu_devdeny_node (this host cannot attach device programs).
static uint64_t usage_usec(const fs::path &cg)
{
	std::ifstream in(cg / "cpu.stat");
	std::string k;
	uint64_t v = 0;
	while (in >> k >> v)
		if (k == "usage_usec")
			return v;
	return 0;
}

// create_node_in_root(child_, path, minor) with the child in a cgroup v2 of its own: whether it
// made the node, and the CPU time charged to that cgroup meanwhile. The child is gone after.
// Skips where there is no cgroup v2 (the caller returns on IsSkipped()).
static void create_from_own_cgroup(pid_t &child, const gw::SavedDevice &n, uint32_t minor, bool *made,
				   uint64_t *charged)
{
	fs::path cg;
	try {
		cg = gw::cgroup2_mount_point();
	} catch (const std::exception &e) {
		GTEST_SKIP() << "no cgroup v2 here: " << e.what();
	}
	cg /= "gw-nodes-test." + std::to_string(getpid());
	ASSERT_TRUE(fs::create_directory(cg)) << cg;
	{
		std::ofstream(cg / "cgroup.procs") << child;
	}
	uint64_t before = usage_usec(cg);
	*made = gw::action::create_node_in_root(child, n, minor);
	*charged = usage_usec(cg) - before;
	kill(child, SIGKILL);
	waitpid(child, nullptr, 0);
	child = -1;
	fs::remove(cg);
}

TEST_F(ChrootedChild, MakesTheNodeFromTheTasksCgroup)
{
	bool made = false;
	uint64_t charged = 0;
	ASSERT_NO_FATAL_FAILURE(create_from_own_cgroup(child_, node("/dev/dri/renderD128"), 128, &made, &charged));
	if (IsSkipped())
		return;
	ASSERT_TRUE(made);
	EXPECT_TRUE(fs::exists(root_ / "dev/dri/renderD128"));
	EXPECT_GT(charged, 0u) << "nothing ran in the task's cgroup: the node was made from another";
}

// A node already in the task's root is left alone, and finding it needs no child in the task's
// cgroup: that child's joining the cgroup (a migration) was most of the post-restore action's
// time, on every restore, where the plugin had made the files' nodes already.
TEST_F(ChrootedChild, ExistingNodeIsFoundWithoutJoiningTheCgroup)
{
	fs::create_directories(root_ / "dev/dri");
	ASSERT_EQ(mknod((root_ / "dev/dri/card0").c_str(), S_IFCHR | 0600, makedev(226, 0)), 0);
	bool made = true;
	uint64_t charged = 0;
	ASSERT_NO_FATAL_FAILURE(create_from_own_cgroup(child_, node("/dev/dri/card0"), 1, &made, &charged));
	if (IsSkipped())
		return;
	EXPECT_FALSE(made);
	EXPECT_EQ(charged, 0u) << "a child joined the task's cgroup to find a node that was there";
	struct stat st {
	};
	ASSERT_EQ(lstat((root_ / "dev/dri/card0").c_str(), &st), 0);
	EXPECT_EQ(minor(st.st_rdev), 0u) << "the existing node was replaced";
}

TEST_F(ChrootedChild, RefusesOtherPathsAndMajors)
{
	EXPECT_THROW(gw::action::create_node_in_root(child_, node("/dev/sda", 226), 0), gw::Error);
	EXPECT_THROW(gw::action::create_node_in_root(child_, node("/dev/dri/../sda"), 0), gw::Error);
	EXPECT_THROW(gw::action::create_node_in_root(child_, node("/dev/dri/card0", 8), 0), gw::Error);
	EXPECT_FALSE(fs::exists(root_ / "dev/dri"));
}

TEST_F(ChrootedChild, DoesNotFollowSymlinksTheContainerPlanted)
{
	/* the "container" points /dev/dri at a directory outside its root */
	char d[] = "/tmp/gw-outside.XXXXXX";
	fs::path outside = mkdtemp(d);
	fs::create_directory_symlink(outside, root_ / "dev/dri");
	EXPECT_THROW(gw::action::create_node_in_root(child_, node("/dev/dri/card0"), 0), gw::Error);
	EXPECT_TRUE(fs::is_empty(outside)) << "a node was created through the symlink";
	fs::remove(root_ / "dev/dri");
	/* and /dev itself as a symlink to the host's /etc */
	fs::remove(root_ / "dev");
	fs::create_directory_symlink("/etc", root_ / "dev");
	EXPECT_THROW(gw::action::create_node_in_root(child_, node("/dev/dri/card0"), 0), gw::Error);
	EXPECT_FALSE(fs::exists("/etc/dri/card0"));
	fs::remove_all(outside);
}

} // namespace

// Issue 16, finding 3: nodes were created with the image's mode and owner, as root, whatever
// the host's own node allowed. Now no looser than the host's node, with its owner.
TEST(NodeBounds, NoLooserThanTheHostsNode)
{
	gw::SavedDevice img;
	img.path = "/dev/dri/renderD128";
	img.mode = 020666;
	img.uid = 1000;
	img.gid = 1000;
	struct stat host {
	};
	host.st_mode = S_IFCHR | 0660;
	host.st_uid = 0;
	host.st_gid = 44;
	std::string why;
	gw::SavedDevice n = gw::action::as_host_allows(img, &host, &why);
	EXPECT_EQ(n.mode, 0660u);
	EXPECT_EQ(n.uid, 0u);
	EXPECT_EQ(n.gid, 44u);
	EXPECT_EQ(why,
		  "the image gives mode 666, owner 1000:1000, this host's node has mode 660, owner 0:44: no looser "
		  "than that");
	img.mode = 020640;
	img.uid = 0;
	img.gid = 44;
	n = gw::action::as_host_allows(img, &host, &why);
	EXPECT_EQ(n.mode, 0640u) << "a stricter image mode is kept";
	EXPECT_EQ(why, "");
	n = gw::action::as_host_allows(img, nullptr, &why);
	EXPECT_EQ(n.mode, 0640u & 0660u);
	EXPECT_EQ(n.gid, 0u);
	EXPECT_NE(why.find("this host's node was not found"), std::string::npos) << why;
}
