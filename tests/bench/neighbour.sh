# shellcheck shell=bash
# Realistic neighbours of a followed container (issue 17, item 4): CPU-heavy jobs run by a
# process outside the followed cgroup, timed with and without gpuwatch attached. Sourced by
# tests/bench/host_syscalls.sh (the host: tracepoint path) and vmtests/bench/guest.sh (the VM:
# fexit and tracepoint paths).
#
#   compile     gcc -O2 -c of the first NB_FILES C workloads of vmtests/workloads (one gcc,
#               cc1 and as per file: exec, mmap, header opens and reads, then compute)
#   transcode   GStreamer: an MJPEG AVI of NB_FRAMES 640x360 frames (made once by nb_prepare)
#               demuxed, decoded, converted, encoded to MPEG-2 (mpeg2enc) and muxed to a file
#
#   nb_prepare DIR      makes DIR and the transcode's input, and runs each job once untimed
#                       (the first run reads compilers, headers and plugins from disk); non-zero
#                       with a line on stderr when a tool is missing (gcc, gst-launch-1.0 and its
#                       plugins) or a job fails
#   nb_run JOB DIR      runs JOB once; prints its wall time in ms, non-zero when it failed
# env: NB_FILES (8), NB_FRAMES (60)

NB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../vmtests/workloads" && pwd)
NB_FILES=${NB_FILES:-8}
NB_FRAMES=${NB_FRAMES:-60}

nb_sources() {
	# wl_xe_criu.c needs a generated header; the rest build with libdrm's headers alone
	find "$NB_SRC" -maxdepth 1 -name 'wl_*.c' ! -name wl_xe_criu.c | sort | head -n "$NB_FILES"
}

nb_prepare() {
	local dir=$1 e
	mkdir -p "$dir/obj" || return 1
	command -v gcc >/dev/null || { echo "neighbour: gcc is missing" >&2; return 1; }
	pkg-config --exists libdrm || { echo "neighbour: libdrm's headers are missing (libdrm-dev)" >&2; return 1; }
	command -v gst-launch-1.0 >/dev/null || { echo "neighbour: gst-launch-1.0 is missing (gstreamer1.0-tools)" >&2; return 1; }
	for e in videotestsrc jpegenc avimux avidemux jpegdec videoconvert mpeg2enc mpegvideoparse mpegpsmux; do
		gst-inspect-1.0 --exists "$e" || { echo "neighbour: GStreamer element $e is missing (setup.sh installs it)" >&2; return 1; }
	done
	gst-launch-1.0 -q videotestsrc num-buffers="$NB_FRAMES" pattern=ball \
		! video/x-raw,width=640,height=360,framerate=30/1 ! jpegenc ! avimux \
		! filesink location="$dir/src.avi" >"$dir/prepare.log" 2>&1 ||
		{ echo "neighbour: cannot make the transcode's input: $(tail -n 1 "$dir/prepare.log")" >&2; return 1; }
	nb_run compile "$dir" >/dev/null && nb_run transcode "$dir" >/dev/null
}

nb_job() {
	local job=$1 dir=$2 f
	case $job in
	compile)
		for f in $(nb_sources); do
			# shellcheck disable=SC2046 # pkg-config prints several flags
			gcc -O2 $(pkg-config --cflags libdrm) -I"$NB_SRC" -c -o "$dir/obj/$(basename "$f" .c).o" "$f" || return 1
		done
		;;
	transcode)
		gst-launch-1.0 -q filesrc location="$dir/src.avi" ! avidemux ! jpegdec ! videoconvert \
			! mpeg2enc ! mpegvideoparse ! mpegpsmux ! filesink location="$dir/out.mpg" || return 1
		[ -s "$dir/out.mpg" ] || return 1
		rm -f "$dir/out.mpg"
		;;
	*) echo "neighbour: no job $job" >&2; return 1 ;;
	esac
}

nb_run() {
	local t0 t1
	t0=$(date +%s%N)
	nb_job "$1" "$2" >"$2/$1.log" 2>&1 || { echo "neighbour: $1 failed: $(tail -n 1 "$2/$1.log")" >&2; return 1; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
