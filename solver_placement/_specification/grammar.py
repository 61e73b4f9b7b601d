"""Placement specs: what each component asks for, parsed from ``cluster.component_placement``.

Parsing is purely syntactic and never produces placements. A component's ``form`` is one of
three: RLinf's ``resource_ranks[:process_ranks]`` segments (:class:`RankSegments`) or an
explicit list of ranks per process (:class:`ExplicitRanks`), both of which fix the layout, or
:class:`Declarative` (a count of processes and hardware per process; the solver picks the hardware).
Every form may carry the constraints no rank string can say (tensor-parallel groups,
collocation, exclusivity, capacity). Everything the text alone can tell is checked here.
As in RLinf, blanks and empty segments from a stray comma (``"0-3,,4-7,"``) are accepted, and
messages carry RLinf's phrase for each rule ("Resource ranks must be unique", ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import MAX_RANK, RankRange, is_all, parse_range, rank_pieces
from solver_placement._config import check_keys, did_you_mean, gigabytes, positive_int, require_mapping, text
from solver_placement._constants import CLUSTER_LABEL
from solver_placement._errors import PlacementConfigError, PlacementSyntaxError, counted, cut, shown
from solver_placement._limits import check
from solver_placement._specification.environment import DEFAULT_ENVIRONMENT, ENVIRONMENT_KEYS, ProcessEnvironment, parse_environment
from solver_placement._specification.explicit import ExplicitRanks as ExplicitRanks  # re-exported: the forms are read from here
from solver_placement._specification.explicit import explicit_text, parse_explicit

CONSTRAINT_KEYS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "collocate_with",
    "exclusive_with",
    "max_processes_per_hardware",
    "max_processes_per_gpu",
    "memory_gb",
    "offload_weight",
    "offload_optimizer",
    "offload_grad",
    "topology",
)
MEMORY_PARTS = ("weights", "optimizer", "grads", "activations")
TOPOLOGY_GROUPS = ("tensor_parallel", "pipeline_parallel")
SHAPE_KEYS = ("processes", "hardware_per_process", "gpus_per_process", "stride", "resources")
COMPONENT_KEYS = ("node_group", "unit", "placement", *SHAPE_KEYS, *CONSTRAINT_KEYS, *ENVIRONMENT_KEYS)
#: Keys accepted as another spelling of a key (the grammar reads either, never both).
ALIASES = {"gpus_per_process": "hardware_per_process", "max_processes_per_gpu": "max_processes_per_hardware"}


@dataclass(frozen=True)
class Segment:
    """One ``resource_ranks[:process_ranks]`` piece; ``None`` resources mean ``all``."""

    text: str
    resources: RankRange | None
    processes: RankRange | None


@dataclass(frozen=True)
class RankSegments:
    """A rank string: its segments in order, each process's ranks fixed by RLinf's even split."""

    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Declarative:
    """A component given by what it needs; the solver chooses its hardware.

    ``stride`` is an int, or ``"auto"`` (derived from the collocation target's TP groups).
    ``fill``: a ``resources`` window was given (a range, or ``all`` for ``resources=None``),
    so every rank in it is used evenly; without it the solver picks among all ranks.
    """

    processes: int | None
    hardware_per_process: int | None
    stride: int | str
    resources: RankRange | None
    fill: bool = False


#: How a component states its layout; code that depends on it matches on the class.
Form = RankSegments | ExplicitRanks | Declarative


@dataclass(frozen=True)
class Memory:
    """GPU memory of one process on each of its GPUs, in GB: while it runs (``active``) and
    while a collocated component runs (``idle``: what the ``offload_*`` flags do not move out)."""

    active: float
    idle: float


@dataclass(frozen=True)
class DomainRule:
    """Keep each tensor-parallel group (``group="tensor_parallel"``) or each pipeline (all
    ``tp * pp`` processes of a model replica) inside one value of a node label; ``require``
    makes it a hard rule (instead of "one node" for TP groups), ``prefer`` an objective term."""

    group: str
    label: str
    required: bool


@dataclass(frozen=True)
class Constraints:
    """Rules beyond the layout itself, allowed on every form."""

    tensor_parallel_size: int = 1
    collocate_with: str | None = None
    exclusive_with: tuple[str, ...] = ()
    max_processes_per_hardware: int | None = None
    pipeline_parallel_size: int = 1
    memory: Memory | None = None
    topology: tuple[DomainRule, ...] = ()


@dataclass(frozen=True)
class ComponentSpec:
    """The placement rule of one component.

    ``key`` is the config key it came from; components on one comma-joined key share one rule
    (``shares_rule_with`` names the first of them, whose solution they reuse). ``text`` is the
    form as messages quote it. ``environment``: what its processes see around their hardware
    (``_specification/environment.py``), never where they run.
    """

    name: str
    key: str
    node_groups: tuple[str, ...]
    text: str
    form: Form
    constraints: Constraints = field(default_factory=Constraints)
    shares_rule_with: str | None = None
    count_nodes: bool = False
    environment: ProcessEnvironment = DEFAULT_ENVIRONMENT

    @property
    def rule_owner(self) -> str:
        """The component whose rule (and solution) this one uses: itself, or the first of its key."""
        return self.shares_rule_with or self.name

    @property
    def is_declarative(self) -> bool:
        return isinstance(self.form, Declarative)


def parse_component_placement(raw: Any) -> dict[str, ComponentSpec]:
    """Parse the ``component_placement`` mapping (YAML order kept)."""
    mapping = require_mapping(raw, "cluster.component_placement")
    if not mapping:
        raise PlacementConfigError("cluster.component_placement is empty: nothing to place")
    check("max_components", sum(key.count(",") + 1 for key in mapping), "cluster.component_placement", "the number of components")
    components: dict[str, ComponentSpec] = {}
    for key, value in mapping.items():
        names = [name.strip() for name in key.split(",")]
        if any(not name for name in names):
            raise PlacementConfigError(f'component key "{key}": empty component name')
        for position, name in enumerate(names):
            if name in components:
                raise PlacementConfigError(f'component {name!r} has a placement under two keys ("{components[name].key}" and "{key}") (Component {name} has multiple placements defined)')
            components[name] = _parse_component(name, key, value, names[0] if position else None)
    for name, spec in components.items():
        components[name] = _exclusive_with_all(spec, components)
    for spec in components.values():
        _check_references(spec, components)
    return components


def _parse_component(name: str, key: str, value: Any, first_name: str | None) -> ComponentSpec:
    if isinstance(value, Mapping):
        body = require_mapping(value, f"component {name!r}")
        check_keys(body, COMPONENT_KEYS, f"component {name!r}")
        groups = _parse_node_group(body.get("node_group"), name)
        constraints = _parse_constraints(body, name)
        count_nodes = _parse_unit(body.get("unit"), name)
        environment = parse_environment(body, f"component {name!r}")
        has_shape = any(k in body for k in SHAPE_KEYS)
        if "placement" in body and has_shape:
            raise PlacementConfigError(
                f"component {name!r}: give either a 'placement' rank string or declarative keys "
                f"({', '.join(SHAPE_KEYS)}), not both"
            )
        if isinstance(body.get("placement"), list | np.ndarray):
            explicit = parse_explicit(body["placement"], name)
            return ComponentSpec(name, key, groups, explicit_text(body["placement"]), explicit, constraints, first_name, count_nodes, environment)
        if "placement" in body:
            text = _placement_text(body["placement"], name)
            return ComponentSpec(name, key, groups, text, RankSegments(parse_segments(text, name)), constraints, first_name, count_nodes, environment)
        if not has_shape:
            raise PlacementConfigError(f"component {name!r}: needs a 'placement' rank string or 'processes' (placement must be specified in component_placement config)")
        declarative = _parse_declarative(body, name)
        return ComponentSpec(name, key, groups, _describe(body), declarative, constraints, first_name, count_nodes, environment)
    text = _placement_text(value, name)
    return ComponentSpec(name, key, (CLUSTER_LABEL,), text, RankSegments(parse_segments(text, name)), Constraints(), first_name)


def _placement_text(value: Any, name: str) -> str:
    if isinstance(value, bool) or value is None or not isinstance(value, (str, int)):
        raise PlacementConfigError(
            f"component {name!r}: placement must be a rank string such as \"0-7\" or \"0-3:0-7\", not {shown(value)}"
        )
    if isinstance(value, int) and value.bit_length() > 63:
        raise PlacementConfigError(f"component {name!r}: placement {shown(value)} exceeds the largest supported rank {MAX_RANK}")
    text = str(value).strip()
    if not text:
        raise PlacementSyntaxError(f'component {name!r}: placement is empty')
    return text


def parse_segments(text: str, name: str) -> tuple[Segment, ...]:
    """Split a placement string into segments (skipping empty ones, as RLinf does) and check
    everything the text alone tells."""
    pieces = [piece.strip() for piece in rank_pieces(text, "placement", name)]
    if not pieces:
        raise PlacementSyntaxError(f'{name}: placement "{cut(text)}" names no ranks, only commas')
    segments = []
    for piece in pieces:
        halves = piece.split(":")
        if len(halves) > 2:
            raise PlacementSyntaxError(f'{name}: segment "{piece}" has more than one ":"; expected resource_ranks:process_ranks (Invalid rank map string)')
        seg_where = f'{name}: segment "{piece}"'
        resources = None if is_all(halves[0]) else parse_range(halves[0], "resource ranks", seg_where)
        processes = None
        if len(halves) == 2:
            if is_all(halves[1]):
                raise PlacementSyntaxError(f"{seg_where}: process ranks cannot be \"all\"; give a range such as 0-7")
            processes = parse_range(halves[1], "process ranks", seg_where)
        segments.append(Segment(piece, resources, processes))
    _check_segment_order(segments, name)
    return tuple(segments)


def _check_segment_order(segments: Sequence[Segment], name: str) -> None:
    if len(segments) > 1 and any(seg.resources is None for seg in segments):
        raise PlacementSyntaxError(f'{name}: segment "all" selects every resource and cannot be combined with other segments')
    previous: Segment | None = None
    next_process: int | None = 0
    for seg in segments:
        where = f'{name}: segment "{seg.text}"'
        if seg.resources is not None and seg.processes is not None:
            check_multiple(len(seg.resources), len(seg.processes), where)
        if previous is not None and seg.resources is not None and previous.resources is not None:
            if seg.resources.first <= previous.resources.last:
                rule = "unique" if seg.resources.first >= previous.resources.first else "in ascending order"
                raise PlacementSyntaxError(
                    f'{where}: Resource ranks must be {rule} across segments (previous segment "{previous.text}" ends at {previous.resources.last})'
                )
        if seg.processes is not None and next_process is not None and seg.processes.first != next_process:
            raise PlacementSyntaxError(
                f"{where}: Process ranks must be in ascending order and continuous from 0, and unique; "
                f"expected this segment to start at process {next_process}"
            )
        if seg.processes is not None:
            next_process = seg.processes.last + 1
        elif seg.resources is not None and next_process is not None:
            next_process += len(seg.resources)
        else:
            next_process = None  # implicit count of "all" is known once the cluster is
        previous = seg


def check_multiple(num_resources: int, num_processes: int, where: str) -> None:
    """RLinf's even-sharing rule: one count must be a multiple of the other."""
    if num_resources % num_processes and num_processes % num_resources:
        raise PlacementSyntaxError(
            f"{where} has {counted(num_resources, 'resource')} and {counted(num_processes, 'process', 'processes')}; one must be a multiple of the other "
            f"(The number of process ranks {num_processes} must be divisible by the number of resource ranks "
            f"{num_resources} or the number of resource ranks must be divisible by the number of process ranks)"
        )


def _parse_node_group(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return (CLUSTER_LABEL,)
    where = f"component {name!r}: node_group"
    raw = value if isinstance(value, list) else text(value, where).split(",")
    labels = tuple(text(label, where).strip() for label in raw)
    if not labels or any(not label for label in labels):
        raise PlacementConfigError(f"{where} {shown(value)} has an empty label")
    if len(set(labels)) != len(labels):
        raise PlacementConfigError(f"{where} {shown(value)} lists a label twice")
    return labels


def _parse_unit(value: Any, name: str) -> bool:
    """``unit: node`` makes ranks count the nodes of the selected groups, whatever their hardware."""
    if value is None:
        return False
    if not isinstance(value, str) or value.strip().lower() != "node":
        raise PlacementConfigError(f"component {name!r}: unit must be 'node' (ranks count nodes) or left out, not {shown(value)}")
    return True


def _parse_constraints(body: Mapping[str, Any], name: str) -> Constraints:
    where = f"component {name!r}"
    exclusive = body.get("exclusive_with") or ()
    if isinstance(exclusive, str):
        exclusive = [part.strip() for part in exclusive.split(",")]
    if not isinstance(exclusive, (list, tuple)):
        raise PlacementConfigError(f"{where}: exclusive_with must be a list of component names")
    check("max_components", len(exclusive), f"{where}: exclusive_with", "the number of components named")
    collocate = body.get("collocate_with")
    if "max_processes_per_hardware" in body and "max_processes_per_gpu" in body:
        raise PlacementConfigError(f"{where}: give max_processes_per_hardware or its alias max_processes_per_gpu, not both")
    cap = body.get("max_processes_per_hardware", body.get("max_processes_per_gpu"))
    return Constraints(
        tensor_parallel_size=positive_int(body.get("tensor_parallel_size", 1), f"{where}: tensor_parallel_size"),
        collocate_with=None if collocate is None else text(collocate, f"{where}: collocate_with").strip(),
        exclusive_with=tuple(text(other, f"{where}: exclusive_with").strip() for other in exclusive),
        max_processes_per_hardware=None if cap is None else positive_int(cap, f"{where}: max_processes_per_hardware"),
        pipeline_parallel_size=positive_int(body.get("pipeline_parallel_size", 1), f"{where}: pipeline_parallel_size"),
        memory=_parse_memory(body, where),
        topology=_parse_topology(body.get("topology"), where),
    )


def _parse_memory(body: Mapping[str, Any], where: str) -> Memory | None:
    """``memory_gb`` as one number (always resident) or per part, with the offload flags."""
    flags = {key: body.get(key, False) for key in ("offload_weight", "offload_optimizer", "offload_grad")}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise PlacementConfigError(f"{where}: {key} must be true or false, not {shown(value)}")
    raw = body.get("memory_gb")
    if raw is None:
        if any(flags.values()):
            raise PlacementConfigError(f"{where}: offload flags need memory_gb (per part) to say what they save")
        return None
    if isinstance(raw, Mapping):
        check_keys(raw, MEMORY_PARTS, f"{where}: memory_gb")
        parts = {key: gigabytes(raw.get(key, 0), f"{where}: memory_gb.{key}", allow_zero=True) for key in MEMORY_PARTS}
        kept = {"weights": not flags["offload_weight"], "optimizer": not flags["offload_optimizer"], "grads": not flags["offload_grad"]}
        return Memory(sum(parts.values()), sum(parts[key] for key, stays in kept.items() if stays))
    if any(flags.values()):
        raise PlacementConfigError(f"{where}: offload flags need memory_gb given per part (weights, optimizer, grads, activations)")
    total = gigabytes(raw, f"{where}: memory_gb", allow_zero=True)
    return Memory(total, total)


def _parse_topology(raw: Any, where: str) -> tuple[DomainRule, ...]:
    """``topology: {tensor_parallel: {nvlink_domain: require}, pipeline_parallel: {rack: prefer}}``."""
    if raw is None:
        return ()
    body = require_mapping(raw, f"{where}: topology")
    check_keys(body, TOPOLOGY_GROUPS, f"{where}: topology")
    rules = []
    for group, labels in body.items():
        for label, mode in require_mapping(labels, f"{where}: topology.{group}").items():
            if mode not in ("require", "prefer"):
                raise PlacementConfigError(f"{where}: topology.{group}.{label} must be 'require' or 'prefer', not {shown(mode)}")
            rules.append(DomainRule(group, label, mode == "require"))
    return tuple(rules)


def _parse_declarative(body: Mapping[str, Any], name: str) -> Declarative:
    where = f"component {name!r}"
    if "hardware_per_process" in body and "gpus_per_process" in body:
        raise PlacementConfigError(f"{where}: give hardware_per_process or its alias gpus_per_process, not both")
    per_process = body.get("hardware_per_process", body.get("gpus_per_process"))
    stride = body.get("stride", 1)
    if not (isinstance(stride, str) and stride.strip().lower() == "auto"):
        stride = positive_int(stride, f"{where}: stride")
    else:
        stride = "auto"
    resources = body.get("resources")
    window = None
    if resources is not None and not is_all(resources):
        window = parse_range(text(resources, f"{where}: resources"), "resources", where)
    processes = body.get("processes")
    if processes is None and resources is None:
        raise PlacementConfigError(f"{where}: needs 'processes' (or a 'resources' range to fill)")
    return Declarative(
        processes=None if processes is None else positive_int(processes, f"{where}: processes"),
        hardware_per_process=None if per_process is None else positive_int(per_process, f"{where}: hardware_per_process"),
        stride=stride,
        resources=window,
        fill=resources is not None,
    )


def _describe(body: Mapping[str, Any]) -> str:
    return ", ".join(f"{key}={cut(str(body[key]))}" for key in SHAPE_KEYS if key in body)


def _check_references(spec: ComponentSpec, components: Mapping[str, ComponentSpec]) -> None:
    refs = list(spec.constraints.exclusive_with)
    if spec.constraints.collocate_with is not None:
        refs.append(spec.constraints.collocate_with)
    for ref in refs:
        if ref not in components:
            hint = did_you_mean(ref, components, "components")
            raise PlacementConfigError(f"component {spec.name!r}: refers to unknown component {shown(ref)}{hint}")
        if ref == spec.name:
            raise PlacementConfigError(f"component {spec.name!r}: cannot refer to itself in collocate_with/exclusive_with")
    if spec.constraints.collocate_with in spec.constraints.exclusive_with:
        raise PlacementConfigError(
            f"component {spec.name!r}: cannot both collocate with and be exclusive with {spec.constraints.collocate_with!r}"
        )


def _exclusive_with_all(spec: ComponentSpec, components: Mapping[str, ComponentSpec]) -> ComponentSpec:
    """``exclusive_with: all``: every component placed by another key (one clear meaning: the
    components of its own comma-joined key share its layout, so they cannot be meant). A
    component named ``all`` keeps the word's plain meaning."""
    written = spec.constraints.exclusive_with
    if len(written) != 1 or not is_all(written[0]) or written[0] in components:
        return spec
    others = tuple(name for name, other in components.items() if other.key != spec.key)
    return replace(spec, constraints=replace(spec.constraints, exclusive_with=others))
