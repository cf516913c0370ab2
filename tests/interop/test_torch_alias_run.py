"""python -m ember.torch_alias runs scripts and, with -m, modules as `python -m` does."""
import subprocess
import sys
import textwrap

TINY = textwrap.dedent('''
    import sys
    import unittest
    import torch


    class TinyTest(unittest.TestCase):
        def test_grad(self):
            self.assertEqual(torch.__name__, "ember")
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            (x * x).sum().backward()
            self.assertEqual(x.grad.tolist(), [2.0, 4.0])

        def test_maybe_fail(self):
            self.assertNotIn("FAIL", sys.argv[-1:])


    def test_torch_is_ember():
        assert sys.modules["torch"].__name__ == "ember"
''')


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "ember.torch_alias", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_m_unittest_runs_a_torch_test_module(tmp_path):
    (tmp_path / "test_tiny.py").write_text(TINY)
    out = _run(["-m", "unittest", "-v", "test_tiny"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Ran 2 tests" in out.stderr and "OK" in out.stderr
    # a failing test is the exit status, as with python -m unittest
    out = _run(["-m", "unittest", "test_tiny.TinyTest.test_maybe_fail", "FAIL"], tmp_path)
    assert out.returncode != 0 and "FAILED" in out.stderr


def test_m_pytest_runs_a_torch_test_file(tmp_path):
    (tmp_path / "test_tiny.py").write_text(TINY)
    out = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout


def test_m_module_sees_argv_and_path_as_python_m(tmp_path):
    (tmp_path / "probe.py").write_text(textwrap.dedent('''
        import os, sys, torch
        print(repr(sys.argv), __name__, torch.__name__, sys.path[0] == os.getcwd(), sep="|")
    '''))
    out = _run(["-m", "probe", "a", "--b"], tmp_path)
    assert out.returncode == 0, out.stderr
    # what `python -m probe a --b` gives: argv[0] the module's file, __name__ __main__, the
    # current folder first on sys.path; and torch is ember
    assert out.stdout.strip().split("|") == [repr([str(tmp_path / "probe.py"), "a", "--b"]),
                                             "__main__", "ember", "True"]
    # a script: argv[0] is its path, its folder is importable
    (tmp_path / "helper.py").write_text("VALUE = 7\n")
    (tmp_path / "script.py").write_text("import sys, helper, torch\n"
                                        "print(sys.argv, helper.VALUE, torch.__name__)\n")
    out = _run([str(tmp_path / "script.py"), "x"], "/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"[{str(tmp_path / 'script.py')!r}, 'x'] 7 ember"


def test_usage_errors(capsys):
    from ember.torch_alias import main
    assert main(["-m"]) == 2 and "-m needs a module name" in capsys.readouterr().err
    assert main([]) == 2 and "usage:" in capsys.readouterr().err
    assert main(["--bogus"]) == 2 and "usage:" in capsys.readouterr().err
