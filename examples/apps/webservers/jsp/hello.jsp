<%@ page contentType="text/plain; charset=UTF-8" session="false" %><% String who = "World"; %>Hello <%= who %>
