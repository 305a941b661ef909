initiatedAt(open(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(open(D)=true, T) :- happensAt(close_door(D), T).
initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).
terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).

holdsFor(alarm(D)=true, I) :-
    holdsFor(open(D)=true, I1),
    holdsFor(armed(D)=true, I2),
    union_all([I1, I2], I).

holdsFor(quiet(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(alarm(D)=true, I2),
    relative_complement_all(I1, [I2], I).

dynamicDomain(door(_)).
grounding(open_door(D)) :- door(D).
grounding(close_door(D)) :- door(D).
grounding(arm(D)) :- door(D).
grounding(disarm(D)) :- door(D).
grounding(open(D)=true) :- door(D).
grounding(armed(D)=true) :- door(D).
grounding(quiet(D)=true) :- door(D).
grounding(alarm(D)=_) :- door(D).
