/*
 * ptflow: a small driver for libipt's instruction and block decoders
 * (pt_insn_next, pt_blk_next), used by iotap's ground-truth tests and by
 * bench/ptflow.sh. It is not part of iotap.
 *
 *   ptflow version                       the libipt version it was built against
 *   ptflow insn  MODE TRACE RAW:ADDR...  decode with pt_insn_next
 *   ptflow block MODE TRACE RAW:ADDR...  decode with pt_blk_next
 *
 * RAW:ADDR loads the whole file RAW at address ADDR (hex), like ptxed's
 * --raw, through an image section cache as ptxed does. MODE is
 *
 *   stat  print "insn: N." (and "blocks:\tN." for block) like ptxed --quiet --stat
 *   list  write every instruction's IP (insn) or every block's ip, end_ip
 *         and ninsn (block) to stdout as little-endian 64-bit words
 *
 * Errors are printed to stderr as "error OFFSET IP MESSAGE" and decoding
 * goes on at the next PSB, as ptxed does; the exit status is 0 either way.
 */
#include <intel-pt.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *load(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc(n > 0 ? (size_t) n : 1);
	if (!buf || (n > 0 && fread(buf, (size_t) n, 1, f) != 1)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*size = (size_t) n;
	return buf;
}

static int add_raw(struct pt_image_section_cache *iscache, struct pt_image *image, char *arg)
{
	char *colon = strrchr(arg, ':');
	uint64_t addr;
	FILE *f;
	long size;
	int isid;

	if (!colon)
		return -1;
	*colon = 0;
	addr = strtoull(colon + 1, NULL, 16);
	f = fopen(arg, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	if (size <= 0)
		return -1;
	isid = pt_iscache_add_file(iscache, arg, 0, (uint64_t) size, addr);
	if (isid < 0)
		return isid;
	return pt_image_add_cached(image, iscache, isid, NULL);
}

static uint64_t errors;

static void report(uint64_t offset, uint64_t ip, int err)
{
	errors++;
	fprintf(stderr, "error %" PRIx64 " %" PRIx64 " %s\n", offset, ip, pt_errstr(pt_errcode(err)));
}

static int list;
static uint64_t outbuf[4096];
static size_t outn;

static void put(uint64_t v)
{
	outbuf[outn++] = v;
	if (outn == sizeof(outbuf) / sizeof(outbuf[0])) {
		fwrite(outbuf, sizeof(outbuf[0]), outn, stdout);
		outn = 0;
	}
}

static void decode_insn(struct pt_insn_decoder *d, uint64_t *ninsn)
{
	uint64_t sync = 0, off;
	struct pt_insn insn;
	struct pt_event ev;
	int status;

	for (;;) {
		insn.ip = 0;
		status = pt_insn_sync_forward(d);
		if (status < 0) {
			if (status == -pte_eos)
				return;
			pt_insn_get_offset(d, &off);
			report(off, 0, status);
			if (pt_insn_get_offset(d, &off) < 0 || off <= sync)
				return;
			sync = off;
			continue;
		}
		for (;;) {
			while (status & pts_event_pending) {
				status = pt_insn_event(d, &ev, sizeof(ev));
				if (status < 0)
					break;
			}
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			/* pt_insn_next may fail without writing insn: do not
			 * count a stale or uninitialized instruction (the
			 * differential test saw a phantom IP 0 now and then). */
			insn.ip = 0;
			insn.iclass = ptic_error;
			status = pt_insn_next(d, &insn, sizeof(insn));
			if (insn.iclass != ptic_error || status >= 0) {
				(*ninsn)++;
				if (list)
					put(insn.ip);
			}
			if (status < 0)
				break;
		}
		if (status == -pte_eos)
			return;
		pt_insn_get_offset(d, &off);
		report(off, insn.ip, status);
	}
}

static void decode_block(struct pt_block_decoder *d, uint64_t *ninsn, uint64_t *nblocks)
{
	uint64_t sync = 0, off;
	struct pt_block block;
	struct pt_event ev;
	int status;

	for (;;) {
		block.ip = 0;
		block.ninsn = 0;
		status = pt_blk_sync_forward(d);
		if (status < 0) {
			if (status == -pte_eos)
				return;
			pt_blk_get_offset(d, &off);
			report(off, 0, status);
			if (pt_blk_get_offset(d, &off) < 0 || off <= sync)
				return;
			sync = off;
			continue;
		}
		for (;;) {
			while (status & pts_event_pending) {
				status = pt_blk_event(d, &ev, sizeof(ev));
				if (status < 0)
					break;
			}
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			block.ninsn = 0;
			status = pt_blk_next(d, &block, sizeof(block));
			if (status >= 0 || block.ninsn) {
				*ninsn += block.ninsn;
				(*nblocks)++;
				if (list && block.ninsn) {
					put(block.ip);
					put(block.end_ip);
					put(block.ninsn);
				}
			}
			if (status < 0)
				break;
		}
		if (status == -pte_eos)
			return;
		pt_blk_get_offset(d, &off);
		report(off, block.ninsn ? block.end_ip : block.ip, status);
	}
}

int main(int argc, char **argv)
{
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
	struct pt_config config;
	uint64_t ninsn = 0, nblocks = 0;
	uint8_t *buf;
	size_t size;
	int block, i;

	if (argc == 2 && !strcmp(argv[1], "version")) {
		printf("%d\n", LIBIPT_VERSION);
		return 0;
	}
	if (argc < 5 || (strcmp(argv[1], "insn") && strcmp(argv[1], "block")) ||
	    (strcmp(argv[2], "stat") && strcmp(argv[2], "list"))) {
		fprintf(stderr, "usage: ptflow version | {insn|block} {stat|list} TRACE RAW:ADDR...\n");
		return 2;
	}
	block = !strcmp(argv[1], "block");
	list = !strcmp(argv[2], "list");
	buf = load(argv[3], &size);
	if (!buf) {
		fprintf(stderr, "ptflow: cannot read %s\n", argv[3]);
		return 1;
	}
	iscache = pt_iscache_alloc(NULL);
	image = pt_image_alloc(NULL);
	if (!iscache || !image)
		return 1;
	for (i = 4; i < argc; i++) {
		if (add_raw(iscache, image, argv[i]) < 0) {
			fprintf(stderr, "ptflow: cannot load %s\n", argv[i]);
			return 1;
		}
	}
	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	if (block) {
		struct pt_block_decoder *d = pt_blk_alloc_decoder(&config);

		if (!d || pt_blk_set_image(d, image) < 0)
			return 1;
		decode_block(d, &ninsn, &nblocks);
		pt_blk_free_decoder(d);
	} else {
		struct pt_insn_decoder *d = pt_insn_alloc_decoder(&config);

		if (!d || pt_insn_set_image(d, image) < 0)
			return 1;
		decode_insn(d, &ninsn);
		pt_insn_free_decoder(d);
	}
	if (list) {
		fwrite(outbuf, sizeof(outbuf[0]), outn, stdout);
	} else {
		printf("insn: %" PRIu64 ".\n", ninsn);
		if (block)
			printf("blocks:\t%" PRIu64 ".\n", nblocks);
	}
	if (errors)
		fprintf(stderr, "errors: %" PRIu64 "\n", errors);
	pt_image_free(image);
	pt_iscache_free(iscache);
	free(buf);
	return 0;
}
