/*
 * tests/unit/test-shim-yaml.c: cmocka tests of the YAML side of
 * core-shim/core-metrics.c: stress_description_yamlify() key
 * normalisation, and a whole --yaml file (with extra sections)
 * loaded back with libyaml.
 */
#include "test-shim-common.h"

#include <yaml.h>

/*
 *  test_yamlify()
 *	key normalisation cases (reference §5 and edge cases)
 */
static void test_yamlify(void **state)
{
	static const struct {
		const char *desc;
		const char *key;
	} cases[] = {
		{ "MB per sec vm-splice rate", "mb-per-sec-vmsplice-rate" },
		{ "vm-splice calls per sec", "vmsplice-calls-per-sec" },
		{ "nanosecs per page fault", "nanosecs-per-page-fault" },
		{ "nanosecs per MADV_UNMERGEABLE call", "nanosecs-per-madvunmergeable-call" },
		{ "% of pages unmerged", "percent-of-pages-unmerged" },
		{ "CPU (%) used", "cpu-percent-used" },
		{ "merge/unmerge cycles", "mergeunmerge-cycles" },
		{ "pages_unmerged per sec", "pagesunmerged-per-sec" },
		{ "1.5 ratio", "15-ratio" },
		{ "this description is much longer than thirty-nine characters",
		  "this-description-is-much-longer-than-th" },
		{ "%%%%%%%%", "percentpercentpercentpercentpercentperc" },
		{ "", "" },
	};
	char buf[STRESS_SHIM_YAML_KEY_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < SIZEOF_ARRAY(cases); i++) {
		(void)stress_description_yamlify(cases[i].desc, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].key);
		assert_true(strlen(buf) <= 39);
	}
}

/*
 *  map_get()
 *	value node of key in a mapping node, NULL if absent
 */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	assert_int_equal(map->type, YAML_MAPPING_NODE);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (k && (k->type == YAML_SCALAR_NODE) &&
		    !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/*
 *  map_key_at()
 *	the n-th key of a mapping node
 */
static const char *map_key_at(yaml_document_t *doc, yaml_node_t *map, const size_t n)
{
	yaml_node_pair_t *p = map->data.mapping.pairs.start + n;

	assert_true(p < map->data.mapping.pairs.top);
	return (const char *)yaml_document_get_node(doc, p->key)->data.scalar.value;
}

/*
 *  yaml_file_write()
 *	write a complete YAML file for 2 instances with metrics
 */
static void yaml_file_write(const char *path)
{
	FILE *yaml;

	assert_non_null(stress_shared_alloc(2, 0));
	g_shared->stats[0].args.bogo.count.counter = 10;
	g_shared->stats[1].args.bogo.count.counter = 30;
	g_shared->stats[0].duration = 2.0;
	g_shared->stats[1].duration = 2.0;
	stress_metrics_set(&g_shared->stats[0].args, "MB per sec vm-splice rate", 4.0,
		STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(&g_shared->stats[1].args, "MB per sec vm-splice rate", 6.0,
		STRESS_METRIC_HARMONIC_MEAN);
	stress_metrics_set(&g_shared->stats[1].args, "% unmerged: it's done", 1.0,
		STRESS_METRIC_TOTAL);

	g_opt_flags = OPT_FLAGS_TIMES;
	g_pr_log_flags = 0;
	yaml = stress_yaml_open(path);
	assert_non_null(yaml);
	stress_metrics_dump(yaml, "ksm-unmerge");
	stress_times_dump(yaml, 2.0);
	stress_yaml_extra_add("kernel-log", "      errors: 7\n");
	stress_yaml_extra_add("ksm-unmerge", "      pages-unmerged: 1234\n");
	/* the same name again replaces the body, in its place */
	stress_yaml_extra_add("kernel-log", "      errors: 0\n      lines: ['a: b', 'it''s']");
	stress_yaml_close(yaml);
	stress_shared_free();
	g_opt_flags = 0;
}

/*
 *  test_yaml_file()
 *	the written file loads with libyaml and has the 0.22 layout
 */
static void test_yaml_file(void **state)
{
	char path[] = "/tmp/test-shim-yaml-XXXXXX";
	const int fd = mkstemp(path);
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *metrics, *m0, *inst, *sys, *node;
	FILE *fp;
	char tail[8] = "";
	static const char * const order[] = {
		"build-info", "system-info", "metrics", "times", "kernel-log", "ksm-unmerge",
	};
	size_t i;

	(void)state;
	assert_true(fd >= 0);
	(void)close(fd);
	yaml_file_write(path);

	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, -4, SEEK_END), 0);
	assert_int_equal(fread(tail, 1, 4, fp), 4);
	assert_string_equal(tail, "...\n");
	rewind(fp);
	assert_true(yaml_parser_initialize(&parser));
	yaml_parser_set_input_file(&parser, fp);
	if (!yaml_parser_load(&parser, &doc))
		fail_msg("libyaml: %s at line %zu", parser.problem,
			parser.problem_mark.line + 1);
	root = yaml_document_get_root_node(&doc);
	assert_non_null(root);
	assert_int_equal((int)(root->data.mapping.pairs.top - root->data.mapping.pairs.start),
		(int)SIZEOF_ARRAY(order));
	for (i = 0; i < SIZEOF_ARRAY(order); i++)
		assert_string_equal(map_key_at(&doc, root, i), order[i]);

	sys = map_get(&doc, root, "system-info");
	node = map_get(&doc, sys, "stress-ng-version");
	assert_non_null(node);
	assert_int_equal(node->data.scalar.style, YAML_SINGLE_QUOTED_SCALAR_STYLE);
	assert_non_null(map_get(&doc, sys, "cpus-online"));

	metrics = map_get(&doc, root, "metrics");
	assert_int_equal(metrics->type, YAML_SEQUENCE_NODE);
	m0 = yaml_document_get_node(&doc, *metrics->data.sequence.items.start);
	assert_string_equal((const char *)map_get(&doc, m0, "stressor")->data.scalar.value,
		"ksm-unmerge");
	assert_string_equal((const char *)map_get(&doc, m0, "bogo-ops")->data.scalar.value, "40");
	assert_string_equal((const char *)map_get(&doc, m0, "mb-per-sec-vmsplice-rate")->data.scalar.value,
		"5.000000");
	assert_non_null(map_get(&doc, m0, "percent-unmerged-its-done"));
	inst = map_get(&doc, m0, "instances");
	assert_int_equal(inst->type, YAML_SEQUENCE_NODE);
	assert_int_equal((int)(inst->data.sequence.items.top - inst->data.sequence.items.start), 2);
	node = yaml_document_get_node(&doc, inst->data.sequence.items.start[1]);
	assert_string_equal((const char *)map_get(&doc, node, "instance")->data.scalar.value, "1");
	assert_string_equal((const char *)map_get(&doc, node, "bogo-ops")->data.scalar.value, "30");
	assert_non_null(map_get(&doc, node, "max-rss"));
	assert_non_null(map_get(&doc, map_get(&doc, root, "times"), "run-time"));
	node = map_get(&doc, map_get(&doc, root, "ksm-unmerge"), "pages-unmerged");
	assert_string_equal((const char *)node->data.scalar.value, "1234");
	node = map_get(&doc, map_get(&doc, root, "kernel-log"), "errors");
	assert_string_equal((const char *)node->data.scalar.value, "0");

	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	(void)fclose(fp);
	(void)unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yamlify),
		cmocka_unit_test(test_yaml_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
