"""``meter-dashboard completion bash|zsh``: shell completion generated from the argparse parser itself.

No dependency (shtab and argcomplete would each add one): the parser already knows every verb,
sub-verb, flag and choice, so the script is written from it and can never fall behind the CLI.
What it completes: verbs (and ``testset``'s sub-verbs), each verb's flags, the values of flags with
a fixed set of choices (``--bound`` -> ``hoeffding binomial``, ``--example`` -> the shipped
examples), and file names everywhere else. zsh loads the same function through ``bashcompinit``.
"""
from __future__ import annotations

import argparse
import re
import sys

from ..core.cli import add_verb

#: Runnable examples shown by ``--help`` (tests/cli/test_habits.py runs each one).
EXAMPLES = (
    "meter-dashboard completion bash > meter-dashboard.bash && bash -c 'source meter-dashboard.bash && complete -p meter-dashboard'",
)
SHELLS = ("bash", "zsh")


#: What ``completion --help`` says, and how to install the script.
DESCRIPTION = ("Print a completion script for bash or zsh, generated from this command's own parser "
               "(verbs, flags, choices; file names elsewhere). Install it once, e.g. for bash: "
               "meter-dashboard completion bash > ~/.local/share/bash-completion/completions/meter-dashboard; "
               "for zsh: meter-dashboard completion zsh > ~/.zfunc/meter-dashboard.zsh and source that file "
               "from ~/.zshrc.")


def register(sub) -> None:
    p = add_verb(sub, "completion", help="print a shell completion script (bash or zsh)", description=DESCRIPTION,
                 examples=EXAMPLES, heading="example")
    p.add_argument("shell", metavar="{bash,zsh}", help="the shell to complete in")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..core.validation import InputError
    from . import build_parser

    if args.shell not in SHELLS:
        raise InputError("shell", "one of " + ", ".join(SHELLS), args.shell)
    sys.stdout.write(script(build_parser(), args.shell))
    return 0


def _choices(action: argparse.Action) -> list[str]:
    """The fixed values of an option: argparse ``choices``, or a ``{a,b}`` metavar."""
    if action.choices and not isinstance(action.choices, dict):
        return [str(c) for c in action.choices]
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    match = re.fullmatch(r"\{([^{}]+)\}", metavar)
    return match.group(1).split(",") if match else []


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _table(parser: argparse.ArgumentParser, key: str, out: dict) -> None:
    """``key`` -> (sub-verbs, flags, {flag: choices}, positional choices) for every (sub-)parser."""
    subs = _subparsers(parser)
    flags, values, positional = [], {}, []
    for action in parser._actions:
        if action.option_strings:
            flags += [o for o in action.option_strings if o.startswith("--") or o == "-h"]
            if _choices(action):
                for option in action.option_strings:
                    values[option] = _choices(action)
        elif not isinstance(action, argparse._SubParsersAction):
            positional += _choices(action)
    out[key] = (sorted(subs), sorted(set(flags)), values, positional)
    for name, child in subs.items():
        _table(child, f"{key} {name}".strip(), out)


def _words(values) -> str:
    return " ".join(values).replace("'", "")


def script(parser: argparse.ArgumentParser, shell: str = "bash") -> str:
    """The completion script for ``shell`` (``bash`` or ``zsh``)."""
    table: dict = {}
    _table(parser, "", table)
    cases = []
    for key, (subs, flags, values, positional) in sorted(table.items()):
        for flag, choices in sorted(values.items()):
            cases.append(f"        '{key}|{flag}') words='{_words(choices)}'; files=0 ;;")
        words = _words(subs + positional)
        cases.append(f"        '{key}|') words='{words}'; flags='{_words(flags)}'; files={0 if subs else 1} ;;")
    body = "\n".join(cases)
    function = f"""# meter-dashboard {shell} completion, generated from its parser (meter-dashboard completion {shell})
_meter_dashboard() {{
    local cur prev key words='' flags='' files=1 i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    key=''
    for ((i = 1; i < COMP_CWORD; i++)); do  # the verb and sub-verb typed so far
        case "${{COMP_WORDS[i]}}" in -*) break ;; esac
        case " $(_meter_dashboard_table "$key|" subs) " in
            *" ${{COMP_WORDS[i]}} "*) key="${{key:+$key }}${{COMP_WORDS[i]}}" ;;
            *) break ;;
        esac
    done
    if [[ "$prev" == -* ]] && _meter_dashboard_case "$key|$prev"; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
        return 0
    fi
    _meter_dashboard_case "$key|"
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [[ -n "$words" ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    elif [[ "$files" == 1 ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}}
_meter_dashboard_case() {{
    case "$1" in
{body}
        *) return 1 ;;
    esac
    return 0
}}
_meter_dashboard_table() {{
    local words='' flags='' files=1
    _meter_dashboard_case "$1" && echo "$words"
}}
"""
    if shell == "zsh":
        return ("autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }\n"
                "autoload -U +X bashcompinit && bashcompinit\n" + function
                + "complete -o default -F _meter_dashboard meter-dashboard\n")
    return function + "complete -o default -F _meter_dashboard meter-dashboard\n"
