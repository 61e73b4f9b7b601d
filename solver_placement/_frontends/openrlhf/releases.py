"""The OpenRLHF releases whose placement rules the front end reads, and how their flags are spelled.

Three rule sets, each read in the released wheel on PyPI (pinned by hash in the differential test)
and the tag of ``github.com/OpenRLHF/OpenRLHF``:

* ``0.7.0`` (tag ``v0.7.0``, a4c7764e): flat flags (``--actor_num_nodes``); a vLLM engine of
  tensor-parallel size ``tp`` takes the *consecutive* bundles ``i*tp .. (i+1)*tp-1`` of its
  placement group (``create_vllm_engines``, ``openrlhf/trainer/ray/vllm_engine.py`` line 159),
  whatever node Ray put them on; no asynchronous training; ``_validate_args`` (``cli/train_ppo_ray.py``
  lines 25-50) checks the sizes first.
* ``0.10.1.post2`` (tag ``v0.10.1.post2``, ff481ecd), the last release with flat flags: engines
  take bundles regrouped by node (``get_bundle_indices``, ``openrlhf/trainer/ray/utils.py`` line 7,
  added in 0.7.1 for ray#51117); ``--async_train`` gives vLLM its own placement group even with
  ``--colocate_all_models`` (``cli/train_ppo_ray.py`` line 75).
* ``0.11.0`` (tag ``v0.11.0``, 3c3be623) and ``0.11.2`` (PyPI; the same placement code): dotted
  flags (``--actor.num_nodes``, from 0.10.2 on, turned into nested names by
  ``openrlhf/utils/config.py`` ``hierarchize``), the rules of 0.10.1.post2. Their parsers differ
  (0.11.2 renamed ``--algo.advantage.is_correction_enable``, which 0.11.0's own example scripts use).

Releases between them share the placement code of the one above but not its full parser, so only
these are offered (``--release``). Without one, the input picks: the newest release of its flags'
spelling (dotted, else flat) whose parser accepts every flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._errors import PlacementConfigError, shown

#: The placement keys the reader uses, in 0.11's dotted spelling (the canonical names here).
KEYS = (
    "actor.num_nodes", "actor.num_gpus_per_node", "ref.num_nodes", "ref.num_gpus_per_node",
    "critic.num_nodes", "critic.num_gpus_per_node", "reward.num_nodes", "reward.num_gpus_per_node",
    "vllm.num_engines", "vllm.tensor_parallel_size", "train.colocate_all", "train.colocate_actor_ref",
    "train.colocate_critic_reward", "train.async_enable", "algo.kl.init_coef", "reward.remote_url",
    "reward.model_name_or_path", "critic.model_name_or_path", "actor.model_name_or_path",
    "algo.advantage.estimator", "train.agent_func_path", "ds.packing_samples", "ds.ring_attn_size",
    "ds.tensor_parallel_size", "train.dynamic_batch_enable", "rollout.batch_size", "rollout.micro_batch_size",
    "rollout.n_samples_per_prompt", "ds.zero_stage", "data.max_images_per_prompt",
)  # fmt: skip

#: The flat spelling of each key (0.10.1.post2 and earlier), where it differs from ``--a_b``.
FLAT = {
    "train.colocate_all": "colocate_all_models",
    "train.colocate_actor_ref": "colocate_actor_ref",
    "train.colocate_critic_reward": "colocate_critic_reward",
    "train.async_enable": "async_train",
    "algo.kl.init_coef": "init_kl_coef",
    "reward.remote_url": "remote_rm_url",
    "reward.model_name_or_path": "reward_pretrain",
    "critic.model_name_or_path": "critic_pretrain",
    "actor.model_name_or_path": "pretrain",
    "algo.advantage.estimator": "advantage_estimator",
    "train.agent_func_path": "agent_func_path",
    "ds.packing_samples": "packing_samples",
    "ds.ring_attn_size": "ring_attn_size",
    "ds.tensor_parallel_size": "ds_tensor_parallel_size",
    "train.dynamic_batch_enable": "use_dynamic_batch",
    "rollout.batch_size": "rollout_batch_size",
    "rollout.micro_batch_size": "micro_rollout_batch_size",
    "rollout.n_samples_per_prompt": "n_samples_per_prompt",
    "ds.zero_stage": "zero_stage",
    "data.max_images_per_prompt": "max_images_per_prompt",
}


@dataclass(frozen=True)
class Release:
    """One rule set (see the module docstring)."""

    version: str
    #: Flags spelled ``--actor.num_nodes`` (else ``--actor_num_nodes``).
    dotted: bool
    #: vLLM engines take bundles regrouped by node (``get_bundle_indices``), else consecutive ones.
    bundles_by_node: bool
    #: ``--async_train`` / ``--train.async_enable`` exists and gives vLLM its own placement group.
    has_async: bool

    def flag(self, key: str) -> str:
        """The flag of a placement key in this release (``--actor.num_nodes``, ``--colocate_all_models``)."""
        if self.dotted:
            return f"--{key}"
        return "--" + FLAT.get(key, key.replace(".", "_"))

    def dest(self, key: str) -> str:
        """The argparse ``dest`` the flag fills."""
        return self.flag(key)[2:]


RELEASES = (
    Release("0.7.0", dotted=False, bundles_by_node=False, has_async=False),
    Release("0.10.1.post2", dotted=False, bundles_by_node=True, has_async=True),
    Release("0.11.0", dotted=True, bundles_by_node=True, has_async=True),
    Release("0.11.2", dotted=True, bundles_by_node=True, has_async=True),
)
NEWEST = RELEASES[-1]
OLDEST = RELEASES[0]


def release_named(version: str) -> Release:
    """The rule set of ``version`` (one of :data:`RELEASES`), or an error naming them."""
    for release in RELEASES:
        if release.version == version:
            return release
    raise PlacementConfigError(
        f"OpenRLHF release {shown(version)} is not one whose rules the library reads; "
        f"give --release one of {', '.join(r.version for r in RELEASES)}: 0.11.2 or 0.11.0 for 0.10.2 and later (dotted flags), "
        "0.10.1.post2 for 0.7.1 to 0.10.1, 0.7.0 for older (their placement code is the same; unknown flags are checked "
        "against the parser of the release named)"
    )


def releases_of(arguments: Sequence[str]) -> list[Release]:
    """The releases an argument list may be for, newest first: those spelling flags dotted when a
    placement flag is dotted (0.10.2 or later), else the flat ones."""
    dotted = {NEWEST.flag(key) for key in KEYS}
    shows_dotted = any(word.split("=", 1)[0] in dotted for word in arguments)
    return [release for release in reversed(RELEASES) if release.dotted == shows_dotted]
