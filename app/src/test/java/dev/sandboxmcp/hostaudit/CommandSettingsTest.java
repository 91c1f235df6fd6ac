package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CommandSettingsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            core.fsmonitor          | touch /tmp/x
            core.hookspath          | .husky
            core.sshcommand         | ssh -o ProxyCommand=x
            core.pager              | less; id
            core.editor             | vim
            core.askpass            | /x
            diff.external           | x
            diff.Foo.textconv       | cat
            diff.foo.command        | x
            merge.ours.driver       | true
            filter.lfs.clean        | x
            filter.lfs.smudge       | x
            filter.lfs.process      | x
            credential.helper       | store
            credential.https://h.helper | x
            gpg.program             | x
            gpg.ssh.program         | x
            sequence.editor         | x
            alias.st                | !sh -c id
            alias.sp                | '  !id'
            alias.st                | status -s
            alias.lg                | log --graph -c
            alias.q                 | '"-c" core.fsmonitor="touch /tmp/x;false" status'
            alias.f                 | fetch --upload-pack=touch .
            alias.g                 | grep -Otouch -e .
            alias.x.command         | log
            alias.x.y               | !id
            alias.Up.Stream         | fetch --upload-pack=touch .
            include.path            | ../shared.gitconfig
            includeif.gitdir:~/x/.path | x
            pager.log               | less -R; id
            remote.origin.uploadpack | sh -c id
            submodule.s.update      | !id
            url.ext::sh -c id.insteadof | https://example
            protocol.ext.allow      | always
            """)
    void settingsThatRunCommandsAreFound(String key, String value) {
        assertThat(CommandSettings.runsCommand(key, value)).as(key).isTrue();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            core.bare               | false
            core.filemode           | true
            diff.renames            | true
            merge.ff                | only
            remote.origin.url       | https://example
            user.email              | a@b
            pager.log               | false
            submodule.s.update      | rebase
            filter                  | x
            url.https://a.insteadof | git://a
            protocol.allow          | never
            protocol.ext.allow      | never
            protocol.file.allow     | always
            remote.origin.url       | https://example.org/x
            hook.x.event            | pre-commit
            gc.auto                 | 0
            """)
    void ordinarySettingsAreNot(String key, String value) {
        assertThat(CommandSettings.runsCommand(key, value)).as(key).isFalse();
    }
}
