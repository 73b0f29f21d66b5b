"""The candidate zygote imports torch._inductor only when kforge asks, before the first candidate that needs
it (the Inductor teacher's), and nothing outside its list."""

from __future__ import annotations

from conftest import run_on_the_interpreter


def test_the_zygote_preloads_inductor_on_request_and_nothing_else() -> None:
    run = run_on_the_interpreter(
        "import sys\n"
        "from kforge.worker import zygote\n"
        "zygote._preload()\n"
        "assert 'torch._inductor' not in sys.modules, 'paid by every zygote'\n"
        "refused = zygote._preload_more(['os', 'torch._inductor'])\n"
        "assert refused['ok'] is False and \"['os']\" in refused['error']['message'], refused\n"
        "assert 'torch._inductor' not in sys.modules, 'a refused request imports nothing'\n"
        "sys.modules['torch._inductor_missing_for_the_test'] = None  # an import that fails\n"
        "zygote.PRELOADABLE = zygote.PRELOADABLE | {'torch._inductor_missing_for_the_test'}\n"
        "failed = zygote._preload_more(['torch._inductor_missing_for_the_test'])\n"
        "assert failed['ok'] is False and failed['error']['kind'] == 'environment', failed\n"
        "assert zygote._preload_more(['torch._inductor']) == {'ok': True}\n"
        "assert 'torch._inductor' in sys.modules\n"
        "print('ok')\n"
    )
    assert run.stdout.strip() == "ok", run.stderr
