# Install rules and the Debian packages (scripts/package): takosumi-agent (the agent, its
# supervisor and confinement helpers) and takosumi-control (the control plane and the takosumi
# CLI). Paths follow Debian: programs in /usr/bin, units in /lib/systemd/system, users from
# sysusers.d, directories from tmpfiles.d, example configurations as conffiles in /etc/takosumi.
include(GNUInstallDirs)

set(pkg ${PROJECT_SOURCE_DIR}/packaging)
install(TARGETS takosumi-agent takosumi-supervise takosumi-confine
        RUNTIME DESTINATION bin COMPONENT agent)
install(TARGETS takosumi-control takosumi RUNTIME DESTINATION bin COMPONENT control)
foreach(component agent control)
  set(name takosumi-${component})
  install(FILES ${PROJECT_SOURCE_DIR}/systemd/${name}.service
          DESTINATION /lib/systemd/system COMPONENT ${component})
  install(FILES ${pkg}/sysusers/${name}.conf DESTINATION lib/sysusers.d COMPONENT ${component})
  install(FILES ${pkg}/tmpfiles/${name}.conf DESTINATION lib/tmpfiles.d COMPONENT ${component})
  install(FILES ${pkg}/copyright DESTINATION share/doc/${name} COMPONENT ${component})
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.gz
          DESTINATION share/doc/${name} COMPONENT ${component})
  install(FILES ${PROJECT_SOURCE_DIR}/docs/operations.md ${PROJECT_SOURCE_DIR}/docs/configuration.md
                ${PROJECT_SOURCE_DIR}/docs/security.md
          DESTINATION share/doc/${name} COMPONENT ${component})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/systemd/agent.yaml.example DESTINATION /etc/takosumi
        RENAME agent.yaml PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/control.yaml.example DESTINATION /etc/takosumi
        RENAME control.yaml PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ COMPONENT control)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/takosumi-agent.network.conf.example
        DESTINATION share/doc/takosumi-agent/examples COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/docs/cli.md DESTINATION share/doc/takosumi-control
        COMPONENT control)

# Debian wants the changelog compressed with maximum compression and no timestamp.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/packaging)
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9nc ${pkg}/changelog > ${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.gz
  DEPENDS ${pkg}/changelog)
add_custom_target(takosumi_changelog ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog.gz)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VENDOR "takosumi")
set(CPACK_PACKAGE_CONTACT "takosumi maintainers <maintainers@takosumi.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent control)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://takosumi.invalid/")
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME takosumi-agent)
set(CPACK_DEBIAN_CONTROL_PACKAGE_NAME takosumi-control)
# CPack indents the lines after the first; each stays under 80 characters.
set(CPACK_COMPONENT_AGENT_DESCRIPTION "OpenTofu runner agent
Polls a takosumi control plane for authorized Runs and runs OpenTofu plans,
applies and drift checks in a bubblewrap sandbox. The state is decrypted only
inside each Run's workspace and re-encrypted before it leaves the host.")
set(CPACK_COMPONENT_CONTROL_DESCRIPTION "reference control plane for takosumi agents
Serves the takosumi API and the agent protocol from an embedded SQLite
database: Workspaces, Capsules, Runs, encrypted StateVersions and Outputs.
Includes the takosumi command line client.")
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "bubblewrap, systemd")
set(CPACK_DEBIAN_CONTROL_PACKAGE_DEPENDS "systemd")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    "${pkg}/debian/takosumi-agent/conffiles;${pkg}/debian/takosumi-agent/postinst;${pkg}/debian/takosumi-agent/prerm;${pkg}/debian/takosumi-agent/postrm")
set(CPACK_DEBIAN_CONTROL_PACKAGE_CONTROL_EXTRA
    "${pkg}/debian/takosumi-control/conffiles;${pkg}/debian/takosumi-control/postinst;${pkg}/debian/takosumi-control/prerm;${pkg}/debian/takosumi-control/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
