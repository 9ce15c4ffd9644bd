/* The graph readers from a seed corpus of node-link documents: the entry
 * point of fuzz_graph, built a second time so that libFuzzer keeps this
 * corpus (fuzz/corpus/fuzz_nodelink) apart. */
#include "fuzz_graph.c"
