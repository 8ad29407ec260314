package main

import (
	"fmt"
	"slices"
	"strings"
)

// A family is a kind of world built from real model answers: which data,
// which models are eligible for its panels, and how a panel of five is
// drawn from them. Every world of a family is the family's data judged
// by a panel the seed draws, so that what is measured on one family
// holds for panels nobody picked.
type family struct {
	name, title string
	kind        dataKind
	// draw returns panel p of seed: five eligible models, session 1
	// first.
	draw func(seed uint64, p int) [panelSize]string
	// runsTarget is adaptive's runs per call at most, the target of the
	// family.
	runsTarget float64
}

// delegates reports whether the family's worlds delegate (numbers to
// compute) rather than validate (claims to judge).
func (f *family) delegates() bool { return f.kind == gsm8k }

// The eligible models of each family, from the accuracies in each data
// folder's models.csv (or measured on the whole file where there is
// none). docs/ACCURACY.md lists them.
var (
	// lookAlikes are the emotion set's base models whose answers
	// coincide on at least 90% of the 10,000 texts: falcon-7b and
	// mpt-7b give the same answer on 95.9% of them (and cast the same
	// vote on a seller's claim on 96%), and are right on 32% and 36%.
	// No other pair of the ten models passes 84%.
	lookAlikes = []string{"falcon-7b", "mpt-7b"}
	// emotionGood are the emotion set's models right on 61% to 65% of
	// the texts.
	emotionGood = []string{"Mistral-7B-v0.1", "Qwen-14B", "Qwen-7B", "Llama-2-13b-hf"}
	// emotionRest are its other models, right on 40% to 57%.
	emotionRest = []string{"Llama-2-7b-hf", "Yi-6B", "internlm-7b", "deepseek-llm-7b-base"}

	// llmbarStrong is LLMBar's strong judge, GPT-4, right on 77% to 86%
	// of the items in either order; llmbarWeak are the judges right on
	// 40% to 57% (PaLM2, at 56% to 72%, is in neither). Each judges with
	// one of llmbarStrategies, drawn with it.
	llmbarStrong     = "GPT-4"
	llmbarWeak       = []string{"ChatGPT", "ChatGPT-0301", "LLaMA2", "Falcon"}
	llmbarStrategies = []string{"Vanilla_NoRules", "Vanilla", "CoT", "Metrics_Reference"}

	// judgeBenchStrong is JudgeBench's strong judge, o1-mini with the
	// arena-hard prompt, right on 71% and 75% of the pairs in the two
	// orders; judgeBenchWeak are its five reward models, right on 59% to
	// 65%.
	judgeBenchStrong = "arena_hard:o1-mini-2024-09-12"
	judgeBenchWeak   = []string{"reward_model:Ray2333_GRM-Gemma-2B-rewardmodel-ft", "reward_model:Skywork_Skywork-Reward-Gemma-2-27B",
		"reward_model:Skywork_Skywork-Reward-Llama-3.1-8B", "reward_model:internlm_internlm2-20b-reward", "reward_model:internlm_internlm2-7b-reward"}

	// mmluStrong are the MMLU-Pro models right on 49% to 72% of the
	// questions, mmluMid those right on 36% to 47%.
	mmluStrong = []string{"gpt-4o-2024-05-13(early-run)", "gemini-1.5-pro-002", "gemini-1.5-flash-002", "Meta-Llama-3_1-70B-Instruct",
		"DeepSeek-Coder-V2", "deepseek-v2-chat(early-run)", "Meta-Llama-3_1-70B", "Meta-Llama-3-70B", "Qwen1.5-110B", "jamba-1.5-large"}
	mmluMid = []string{"Qwen1.5-72B-Chat", "Meta-Llama-3_1-8B-Instruct", "Yi-34B", "mathstral-7B", "Mixtral-8x7B-Instruct-v0.1",
		"Phi-3-mini-4k-instruct", "Mixtral-8x7B-v0.1", "Meta-Llama-3_1-8B", "c4ai-command-r-v01", "Llama-2-70b-hf"}

	// gsmSmall are the GSM8K chat models of at most 12 billion
	// parameters (52% to 87% right); gsmMid the mid-size and
	// undisclosed-size chat models right on 70% to 89%.
	gsmSmall = []string{"Meta-Llama-3-8B-Instruct", "Meta-Llama-3.1-8B-Instruct", "Mistral-Nemo-Instruct-2407", "Phi-3.5-mini-instruct",
		"Qwen2-7B-Instruct", "Yi-1.5-9B-Chat", "gemma-2-9b-it", "gemma-2-2b-it"}
	gsmMid = []string{"Yi-1.5-34B-Chat", "Mixtral-8x7B-Instruct-v0.1", "command-r-plus", "gpt-3.5-turbo-0125", "yi-large",
		"yi-large-preview", "reka-flash-20240226", "reka-core-20240501", "claude-3-haiku-20240307", "Athene-70B"}
)

// families are the world families, in the order they are reported.
var families = []family{
	{
		name:  "lookalike",
		title: "look-alike weak models beside one or two good ones (emotion classification, base models, real option probabilities)",
		kind:  emotion,
		draw: func(seed uint64, p int) [panelSize]string {
			good := 1 + p%2 // one good model on even panels, two on odd ones
			ms := append(slices.Clone(lookAlikes), drawn(seed, "lookalike-good", p, emotionGood, good)...)
			return shuffled(seed, "lookalike", p, append(ms, drawn(seed, "lookalike-rest", p, emotionRest, panelSize-len(ms))...))
		},
		runsTarget: 2.5,
	},
	{
		name:  "llmbar",
		title: "one strong judge among near-chance judges (LLMBar natural and adversarial pairs, each in both orders)",
		kind:  llmbar,
		draw: func(seed uint64, p int) [panelSize]string {
			strategy := func(judge string) string {
				return judge + "|" + drawn(seed, "llmbar-strategy-"+judge, p, llmbarStrategies, 1)[0]
			}
			ms := []string{strategy(llmbarStrong)}
			for _, j := range drawn(seed, "llmbar-weak", p, llmbarWeak, panelSize-1) {
				ms = append(ms, strategy(j))
			}
			return shuffled(seed, "llmbar", p, ms)
		},
		runsTarget: 2.5,
	},
	{
		name:  "judgebench",
		title: "one strong judge among near-chance reward models (JudgeBench pairs, each in both orders)",
		kind:  judgeBench,
		draw: func(seed uint64, p int) [panelSize]string {
			ms := append([]string{judgeBenchStrong}, drawn(seed, "judgebench", p, judgeBenchWeak, panelSize-1)...)
			return shuffled(seed, "judgebench", p, ms)
		},
		runsTarget: 2.5,
	},
	{
		name: "mmlu-strong", title: "MMLU-Pro, five strong models", kind: mmluPro,
		draw:       fromPool("mmlu-strong", mmluStrong),
		runsTarget: 2.35,
	},
	{
		name: "mmlu-mid", title: "MMLU-Pro, five mid-size models", kind: mmluPro,
		draw:       fromPool("mmlu-mid", mmluMid),
		runsTarget: 2.5,
	},
	{
		name: "gsm8k-small", title: "GSM8K delegation, five small chat models", kind: gsm8k,
		draw:       fromPool("gsm8k-small", gsmSmall),
		runsTarget: 2.5,
	},
	{
		name: "gsm8k-mid", title: "GSM8K delegation, five mid-size chat models", kind: gsm8k,
		draw:       fromPool("gsm8k-mid", gsmMid),
		runsTarget: 2.5,
	},
}

// fromPool returns the draw of a family whose panels are any five of
// pool.
func fromPool(name string, pool []string) func(seed uint64, p int) [panelSize]string {
	return func(seed uint64, p int) [panelSize]string {
		return shuffled(seed, name, p, drawn(seed, name, p, pool, panelSize))
	}
}

// drawn returns k distinct members of pool drawn by seed for panel p of
// the draw named what, in the order drawn.
func drawn(seed uint64, what string, p int, pool []string, k int) []string {
	left := slices.Clone(pool)
	out := make([]string, 0, k)
	for i := range min(k, len(left)) {
		j := i + pick(seed, streamPanel, fmt.Sprintf("%s/%d/%d", what, p, i), len(left)-i)
		left[i], left[j] = left[j], left[i]
		out = append(out, left[i])
	}
	return out
}

// shuffled returns the five models in an order drawn by seed: which
// session a model is says nothing of how good it is.
func shuffled(seed uint64, what string, p int, ms []string) [panelSize]string {
	var out [panelSize]string
	copy(out[:], drawn(seed, what+"-order", p, ms, panelSize))
	return out
}

// parseFamilies reads a comma-separated list of family names; "all" or
// empty is every family.
func parseFamilies(s string) ([]*family, error) {
	if s == "" || s == "all" {
		out := make([]*family, len(families))
		for i := range families {
			out[i] = &families[i]
		}
		return out, nil
	}
	var out []*family
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(families, func(fm family) bool { return fm.name == f })
		if i < 0 {
			return nil, fmt.Errorf("-families: no family %q; the families are %s", f, familyNames())
		}
		out = append(out, &families[i])
	}
	return out, nil
}

// familyNames returns the families' names, comma-separated.
func familyNames() string {
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}
