"""python3 -m paddle_prof run: profiling a script without touching it."""

import os
import subprocess
import sys
import textwrap


def run(tmp_path, script_text, *options):
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent(script_text))
    return subprocess.run([sys.executable, '-m', 'paddle_prof', 'run', *options, '--',
                           str(script), 'arg1'],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())


def test_run_profiles_a_script_and_prints_the_table(tmp_path):
    result = run(tmp_path, '''
        import sys
        import paddle_prof
        assert sys.argv[1:] == ['arg1'], sys.argv
        for _ in range(3):
            with paddle_prof.record_event('script_op'):
                pass
        print('script done')
    ''', '--sorted-key', 'calls', '--profile-path', str(tmp_path / 'p.json'))
    assert result.returncode == 0, result.stderr
    assert 'script done' in result.stdout
    assert 'Profiling Report' in result.stdout
    assert 'Sorted by number of calls' in result.stdout
    assert 'script_op' in result.stdout
    assert (tmp_path / 'p.json.summary.json').exists()


def test_run_yields_to_a_script_that_opens_its_own_profiler(tmp_path):
    result = run(tmp_path, '''
        import paddle_prof
        with paddle_prof.record_event('before_own_profiler'):
            pass
        with paddle_prof.profiler('CPU', 'total') as prof:
            with paddle_prof.record_event('own_op'):
                pass
        assert [e.name for e in prof.report.events] == ['own_op']
    ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('Profiling Report') == 1
    assert 'own_op' in result.stdout
    assert 'before_own_profiler' not in result.stdout


def test_run_keeps_the_scripts_exit_code_and_still_reports(tmp_path):
    result = run(tmp_path, '''
        import sys
        import paddle_prof
        with paddle_prof.record_event('exiting_op'):
            pass
        sys.exit(3)
    ''')
    assert result.returncode == 3
    assert 'exiting_op' in result.stdout
