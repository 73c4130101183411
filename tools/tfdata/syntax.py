"""What every room reads programs with: names, calls, assignments, arguments, as libcst
nodes and code. Parsed, never executed."""

import collections

import libcst as cst
from libcst.metadata import QualifiedNameProvider
from libcst.metadata import QualifiedNameSource

from .. import rules


class NotThisPattern(Exception):
    """The statement is a room's, but the program differs from its pattern: the message
    says how, and the pipeline stays on compat_input."""


def qualified(command, node) -> str:
    """The served name (`batch`, `TextLineReader`) `node` names, or ""."""
    names = command.get_metadata(QualifiedNameProvider, node, set())
    for name in (q.name for q in names if q.source == QualifiedNameSource.IMPORT):
        name = rules.as_tf1(name)
        if name in rules.RENAMES:
            return rules.RENAMES[name]
    return ""


def served_calls(command, nodes) -> list:
    """(served name, call) of every call under `nodes` that names a served name."""
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call):
            name = qualified(command, call.func)
            if name:
                found.append((name, call))

    for node in nodes:
        node.visit(Calls())
    return found


def tf_root(node) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else "tf"


def code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


def call_of(statement):
    """(targets, call) of `targets = call(...)`, or (None, None)."""
    target, value = assigned(statement)
    return (target, value) if isinstance(value, cst.Call) else (None, None)


def assigned(statement):
    """(target, value) of `target = value`, or (None, None)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target, small.value
    return None, None


def returned(statement):
    """The value of `return value`, or None."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    return small.value if isinstance(small, cst.Return) else None


def called(statement):
    """(targets, call) of `targets = call(...)`, (None, call) of `return call(...)`, or
    (None, None)."""
    target, call = call_of(statement)
    value = returned(statement) if call is None else call
    return (target, value) if isinstance(value, cst.Call) else (None, None)


def arguments(call: cst.Call, names: tuple) -> dict:
    """Positional and keyword arguments of `call` by parameter name, as code."""
    out = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise NotThisPattern("*args")
        key = arg.keyword.value if arg.keyword else names[index]
        out[key] = code(arg.value)
    return out


def names_counted(node) -> collections.Counter:
    """How many times each name occurs under `node`."""
    counts = collections.Counter()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name):
            counts[name.value] += 1

        # `tf.summary.image(...)` uses no name `image`, nor `f(image=x)` one: only what an
        # attribute is taken from, and an argument's value, are names the code reads.
        def visit_Attribute(self, node):
            node.value.visit(self)
            return False

        def visit_Arg(self, node):
            node.value.visit(self)
            return False

    node.visit(Names())
    return counts


def names_in(nodes) -> set:
    return set().union(*(names_counted(node) for node in nodes))


def target_names(node) -> set:
    """The names an assignment target binds (not the ones it mutates: `a[0] = ...`)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        return set().union(*(target_names(e.value) for e in node.elements))
    if isinstance(node, cst.StarredElement):
        return target_names(node.value)
    return set()


def bound(statement) -> set:
    """The names a statement binds: an assignment's, or any a compound statement's body
    binds (its loop variables, `with ... as`, the assignments inside)."""
    if isinstance(statement, cst.SimpleStatementLine):
        names = set()
        for small in statement.body:
            if isinstance(small, cst.Assign):
                names = names.union(*(target_names(t.target) for t in small.targets))
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                names |= target_names(small.target)
        return names
    names = set()

    class Bound(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node):
            names.update(bound(node))
            return False

        def visit_For(self, node):
            names.update(target_names(node.target))

        def visit_AsName(self, node):
            names.update(target_names(node.name))

        def visit_FunctionDef(self, node):
            names.add(node.name.value)
            return False  # Its own scope.

        def visit_Lambda(self, node):
            return False

    statement.visit(Bound())
    return names


def leaves_its_function(statement) -> bool:
    """Whether a compound statement returns, yields or rebinds a name of another scope:
    moved into the function of the example, it would do that there."""
    found = []

    class Leaves(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return False

        def visit_Lambda(self, node):
            return False

        def visit_Return(self, node):
            found.append(node)

        def visit_Yield(self, node):
            found.append(node)

        def visit_Global(self, node):
            found.append(node)

        def visit_Nonlocal(self, node):
            found.append(node)

    statement.visit(Leaves())
    return bool(found)


def empty_container(statement) -> bool:
    """Whether `statement` only binds names to new empty lists, dicts or sets
    (`image_seq, state_seq = [], []`): what a loop over an example's parts fills."""
    target, value = assigned(statement)
    if target is None:
        return False
    values = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    return all(isinstance(v, (cst.List, cst.Dict, cst.Set)) and not v.elements for v in values)


def range_count(node) -> str | None:
    """`n`, as code, when `node` is `range(n)`; else None."""
    if isinstance(node, cst.Call) and code(node.func) == "range" and len(node.args) == 1:
        return code(node.args[0].value)
    return None


def shuffled(chain: str, made: dict, count: str) -> str:
    """`chain` shuffled each epoch where the producer shuffled: as it is for
    `shuffle=False`, chosen when it runs for a `shuffle` computed by the program (census's
    `shuffle=shuffle`, False for its evaluation)."""
    shuffle = made.get("shuffle", "True")
    line = f"{chain}.shuffle({count}, seed={made.get('seed', 'None')})"
    return {"False": chain, "True": line}.get(shuffle, f"{line} if {shuffle} else {chain}")


def shuffle_line(dataset: str, made: dict, count: str) -> list:
    """The statement that shuffles `dataset` (`shuffled`), where one does."""
    chain = shuffled(dataset, made, count)
    return [] if chain == dataset else [f"{dataset} = {chain}"]


def repeat(made: dict) -> str:
    """`.repeat(...)` for a producer's `num_epochs` (None: for ever)."""
    epochs = made.get("num_epochs", "None")
    return f".repeat({'' if epochs == 'None' else epochs})"


def statement(text: str):
    return cst.parse_statement(text)


def docstring(node) -> bool:
    return (
        isinstance(node, cst.SimpleStatementLine)
        and isinstance(node.body[0], cst.Expr)
        and isinstance(node.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def unused(name: str, rest: list) -> None:
    if name in names_in(rest):
        raise NotThisPattern(f"{name} is used again after the read")


def passed_to(statements: list, name: str):
    """(statement, call) of the first call among `statements` that takes `name` as an
    argument, or None."""
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call):
            if name in names_in([a.value for a in call.args]):
                found.append(call)

    for statement in statements:
        statement.visit(Calls())
        if found:
            return statement, found[0]
    return None
