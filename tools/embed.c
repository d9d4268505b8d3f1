/*
 * embed: turn the knowledge tables (data/NAME.tsv) into a C file that
 * defines kb_blobs[], so the binary carries its tables.  Build-time tool.
 */
#include <stdio.h>
#include <string.h>

static void base_name(const char *path, char *out, size_t n)
{
	const char *s = strrchr(path, '/');
	s = s ? s + 1 : path;
	snprintf(out, n, "%s", s);
	char *dot = strrchr(out, '.');
	if (dot)
		*dot = '\0';
}

/* embed -b NAME FILE: one file as `const unsigned char NAME[]` and
 * `const size_t NAME_len` (the message catalog, src/util/i18n.c). */
static int embed_bytes(const char *name, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "embed: cannot open '%s'\n", path);
		return 1;
	}
	printf("#include <stddef.h>\nconst unsigned char %s[] = {", name);
	int c;
	size_t n = 0;
	while ((c = fgetc(f)) != EOF)
		printf("%s%d,", (n++ % 24) ? "" : "\n", c);
	printf("0};\nconst size_t %s_len = %zu;\n", name, n);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "-b") == 0)
		return embed_bytes(argv[2], argv[3]);
	printf("#include <stddef.h>\n");
	printf("struct kb_blob { const char *name; const char *data; size_t len; };\n");
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "embed: cannot open '%s'\n", argv[i]);
			return 1;
		}
		printf("static const char blob%d[] = {", i);
		int c;
		size_t n = 0;
		while ((c = fgetc(f)) != EOF)
			printf("%s%d,", (n++ % 24) ? "" : "\n", c);
		printf("0};\n");
		fclose(f);
	}
	printf("const struct kb_blob kb_blobs[] = {\n");
	for (int i = 1; i < argc; i++) {
		char name[256];
		base_name(argv[i], name, sizeof name);
		printf("\t{\"%s\", blob%d, sizeof blob%d - 1},\n", name, i, i);
	}
	printf("\t{NULL, NULL, 0}\n};\n");
	return 0;
}
