"""The type stubs declare every public name of the module (and no name it lacks)."""
import ast
import pathlib

import wgtensor as wgt


def stub_names():
    path = pathlib.Path(wgt.__file__).with_name("__init__.pyi")
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
    return names, tree


def test_stubs_cover_the_module():
    names, _ = stub_names()
    public = {n for n in dir(wgt) if not n.startswith("_")}
    assert public - names == set(), "public names without a stub"
    helpers = {"DTypeLike", "DeviceLike", "Axes", "TensorLike", "Operand", "AbstractContextManager", "Any",
               "Iterator", "Optional", "Sequence", "Union", "overload", "np", "npt"}
    assert names - public - helpers - {"__version__"} == set(), "stubs of names the module lacks"


def test_tensor_stub_covers_its_methods():
    _, tree = stub_names()
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    declared = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    actual = {n for n in dir(wgt.Tensor) if not n.startswith("_")}
    assert actual - declared == set()
