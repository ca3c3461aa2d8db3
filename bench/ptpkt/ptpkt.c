/*
 * ptpkt: a small driver for libipt's packet decoder (pt_pkt_next), used by
 * iotap's differential test and benchmark. It is not part of iotap.
 *
 *   ptpkt version          print the libipt version it was built against
 *   ptpkt list FILE        print every packet in a canonical one-line form
 *   ptpkt listoff FILE     the same, each line prefixed with the packet's offset (hex)
 *   ptpkt bench FILE N     decode FILE N times; print packets and nanoseconds
 *
 * Decoding starts at offset 0 (no PSB search). Output ends with
 * "end <offset> <libipt error>" at the first error or at the end.
 */
#include <intel-pt.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint8_t *load(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
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

static struct pt_packet_decoder *decoder(uint8_t *buf, size_t size)
{
	struct pt_config config;
	struct pt_packet_decoder *d;

	pt_config_init(&config);
	config.begin = buf;
	config.end = buf + size;
	d = pt_pkt_alloc_decoder(&config);
	if (d && pt_pkt_sync_set(d, 0) < 0) {
		pt_pkt_free_decoder(d);
		return NULL;
	}
	return d;
}

static void print(const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_pad: puts("pad"); break;
	case ppt_psb: puts("psb"); break;
	case ppt_psbend: puts("psbend"); break;
	case ppt_ovf: puts("ovf"); break;
	case ppt_stop: puts("stop"); break;
	case ppt_tnt_8:
	case ppt_tnt_64:
		printf("%s %u %" PRIx64 "\n", p->type == ppt_tnt_8 ? "tnt.8" : "tnt.64",
		       p->payload.tnt.bit_size, p->payload.tnt.payload);
		break;
	case ppt_tip:
	case ppt_tip_pge:
	case ppt_tip_pgd:
	case ppt_fup:
		printf("%s %u %" PRIx64 "\n",
		       p->type == ppt_tip ? "tip" : p->type == ppt_tip_pge ? "tip.pge" :
		       p->type == ppt_tip_pgd ? "tip.pgd" : "fup",
		       (unsigned) p->payload.ip.ipc, p->payload.ip.ip);
		break;
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec)
			printf("mode.exec %u %u\n", p->payload.mode.bits.exec.csl,
			       p->payload.mode.bits.exec.csd);
		else
			printf("mode.tsx %u %u\n", p->payload.mode.bits.tsx.intx,
			       p->payload.mode.bits.tsx.abrt);
		break;
	case ppt_pip:
		printf("pip %" PRIx64 " %u\n", p->payload.pip.cr3, p->payload.pip.nr);
		break;
	case ppt_vmcs: printf("vmcs %" PRIx64 "\n", p->payload.vmcs.base); break;
	case ppt_cbr: printf("cbr %x\n", p->payload.cbr.ratio); break;
	case ppt_tsc: printf("tsc %" PRIx64 "\n", p->payload.tsc.tsc); break;
	case ppt_tma: printf("tma %x %x\n", p->payload.tma.ctc, p->payload.tma.fc); break;
	case ppt_mtc: printf("mtc %x\n", p->payload.mtc.ctc); break;
	case ppt_cyc: printf("cyc %" PRIx64 "\n", p->payload.cyc.value); break;
	case ppt_mnt: printf("mnt %" PRIx64 "\n", p->payload.mnt.payload); break;
	case ppt_exstop: printf("exstop %u\n", p->payload.exstop.ip); break;
	case ppt_mwait:
		printf("mwait %x %x\n", p->payload.mwait.hints, p->payload.mwait.ext);
		break;
	case ppt_pwre:
		printf("pwre %u %u %u\n", p->payload.pwre.state,
		       p->payload.pwre.sub_state, p->payload.pwre.hw);
		break;
	case ppt_pwrx:
		printf("pwrx %u %u %u %u %u\n", p->payload.pwrx.last,
		       p->payload.pwrx.deepest, p->payload.pwrx.interrupt,
		       p->payload.pwrx.store, p->payload.pwrx.autonomous);
		break;
	case ppt_ptw:
		printf("ptw %u %" PRIx64 " %u\n", p->payload.ptw.plc,
		       p->payload.ptw.payload, p->payload.ptw.ip);
		break;
#if LIBIPT_VERSION >= 0x201
	case ppt_cfe:
		printf("cfe %u %x %u\n", p->payload.cfe.type, p->payload.cfe.vector,
		       p->payload.cfe.ip);
		break;
	case ppt_evd:
		printf("evd %u %" PRIx64 "\n", p->payload.evd.type, p->payload.evd.payload);
		break;
#endif
#if LIBIPT_VERSION >= 0x202
	case ppt_trig:
		printf("trig %x %u %u %u %x\n", p->payload.trig.trbv, p->payload.trig.ip,
		       p->payload.trig.icntv, p->payload.trig.mult,
		       p->payload.trig.icntv ? p->payload.trig.icnt : 0);
		break;
#endif
	default:
		printf("other %d\n", (int) p->type);
		break;
	}
}

int main(int argc, char **argv)
{
	struct pt_packet_decoder *d;
	struct pt_packet p;
	uint8_t *buf;
	size_t size;
	uint64_t off;
	int err;

	if (argc == 2 && !strcmp(argv[1], "version")) {
		printf("%d\n", LIBIPT_VERSION);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: ptpkt version | list FILE | listoff FILE | bench FILE N\n");
		return 2;
	}
	buf = load(argv[2], &size);
	if (!buf) {
		fprintf(stderr, "ptpkt: cannot read %s\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "list") || !strcmp(argv[1], "listoff")) {
		int offsets = !strcmp(argv[1], "listoff");

		d = decoder(buf, size);
		if (!d)
			return 1;
		for (;;) {
			pt_pkt_get_offset(d, &off);
			err = pt_pkt_next(d, &p, sizeof(p));
			if (err < 0)
				break;
			if (offsets)
				printf("%" PRIx64 " ", off);
			print(&p);
		}
		printf("end %" PRIx64 " %s\n", off, pt_errstr(pt_errcode(err)));
		return 0;
	}
	if (!strcmp(argv[1], "bench") && argc == 4) {
		struct timespec t0, t1;
		uint64_t packets = 0, bytes = 0;
		int i, n = atoi(argv[3]);

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++) {
			d = decoder(buf, size);
			if (!d)
				return 1;
			while ((err = pt_pkt_next(d, &p, sizeof(p))) > 0) {
				packets++;
				bytes += (uint64_t) err;
			}
			pt_pkt_free_decoder(d);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("packets %" PRIu64 " bytes %" PRIu64 " ns %" PRIu64 "\n", packets, bytes,
		       (uint64_t) (t1.tv_sec - t0.tv_sec) * 1000000000u +
		       (uint64_t) t1.tv_nsec - (uint64_t) t0.tv_nsec);
		return 0;
	}
	fprintf(stderr, "usage: ptpkt version | list FILE | listoff FILE | bench FILE N\n");
	return 2;
}
